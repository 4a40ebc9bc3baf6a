"""Reference implementations under test, each with a faulty and a correct variant."""
