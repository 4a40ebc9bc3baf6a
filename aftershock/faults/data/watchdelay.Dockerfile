# The WatchDelay proxy as a sidecar image (aftershock.faults.sidecar_delay builds it with the
# aftershock package directory as the context and loads it into the kind nodes).
FROM python:3.11-slim
RUN pip install --no-cache-dir PyYAML==6.0.3
COPY __init__.py /app/aftershock/__init__.py
COPY faults/__init__.py faults/watchdelay.py faults/watchdelay_sidecar.py /app/aftershock/faults/
COPY faults/anchors.py faults/watchframes.py faults/watchhandler.py /app/aftershock/faults/
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["python", "-m", "aftershock.faults.watchdelay_sidecar"]
