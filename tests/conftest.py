"""What pytest does not collect itself: data that tests run on purpose."""

collect_ignore = ["data"]
