# The WatchDelay proxy as a sidecar image (aftershock.faults.watchdelay.sidecar builds it with
# the aftershock package directory as the context and loads it into the kind nodes). Its base
# is built here, from Debian and PyPI, with no registry (aftershock.containers.images.python_base).
FROM aftershock.local/python:3.11
COPY __init__.py /app/aftershock/__init__.py
COPY faults/__init__.py faults/anchors.py /app/aftershock/faults/
COPY faults/watchdelay/__init__.py faults/watchdelay/main.py faults/watchdelay/proxy.py /app/aftershock/faults/watchdelay/
COPY faults/watchdelay/handler.py faults/watchdelay/streams.py faults/watchdelay/frames.py /app/aftershock/faults/watchdelay/
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["python3", "-m", "aftershock.faults.watchdelay.main"]
