"""The container engine kind runs on (one that answers, or one aftershock starts) and the
images built here for it, with no registry."""
