"""The profile format: what a profile may say, how it is loaded (``extends:``, placeholders),
and where the files it names are found."""
