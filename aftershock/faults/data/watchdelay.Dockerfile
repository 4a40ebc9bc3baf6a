# The WatchDelay proxy as a sidecar image (aftershock.faults.sidecar_delay builds it with the
# aftershock package directory as the context and loads it into the kind nodes). Its base is
# built here, from Debian and PyPI, with no registry (aftershock.kindimage.python_base).
FROM aftershock.local/python:3.11
COPY __init__.py /app/aftershock/__init__.py
COPY faults/__init__.py faults/watchdelay.py faults/watchdelay_sidecar.py /app/aftershock/faults/
COPY faults/anchors.py faults/watchframes.py faults/watchhandler.py /app/aftershock/faults/
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["python3", "-m", "aftershock.faults.watchdelay_sidecar"]
