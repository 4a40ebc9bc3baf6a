"""Implementations under test: profiles (how to install, start and map the words of features
onto an implementation) and the runner that starts and stops them."""
