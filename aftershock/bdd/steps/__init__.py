"""Step definitions: the words of the features, mapped onto engine calls. Importing this package
registers the steps of every module in it in ``aftershock.grammar.REGISTRY``: a new step module
is one file here. No step's text may match two definitions (refused at collection), so the
order modules load in decides nothing."""

from aftershock.grammar import load_step_modules

MODULES = load_step_modules(__name__)
