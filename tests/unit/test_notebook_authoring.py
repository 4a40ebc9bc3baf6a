"""Authoring from a notebook: keywords, the saved feature file, injected parameters."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import aftershock.bdd.steps  # noqa: F401  (fills the step registry)
from aftershock.errors import UserError
from aftershock.grammar import split_keyword, steps_with_blocks
from aftershock.notebook.authoring import scenario_block, write_feature
from aftershock.notebook.execute import inject


def test_keywords_are_split_or_inferred():
    assert split_keyword("When I drain node node-1") == ("When", "I drain node node-1")
    assert split_keyword("I drain node node-1") == ("*", "I drain node node-1")
    block = scenario_block("Drain", ["a Deployment web with 3 replicas",
                                     "within 60 seconds 3 pods of web are Running",
                                     "When I drain node node-1",
                                     "And within 60 seconds 3 pods of web are Running"])
    assert block.splitlines() == [
        "  Scenario: Drain",
        "    Given a Deployment web with 3 replicas",
        "    Then within 60 seconds 3 pods of web are Running",
        "    When I drain node node-1",
        "    And within 60 seconds 3 pods of web are Running"]


def test_a_saved_feature_is_checked_like_pytest_would(tmp_path):
    path = tmp_path / "drain.feature"
    write_feature(path, "Drain", ["Given a Deployment web with 3 replicas"])
    write_feature(path, "Again", ["Given a Deployment web with 2 replicas"])
    text = path.read_text()
    assert text.startswith("Feature: Drain\n") and "Scenario: Again" in text
    with pytest.raises(UserError, match="unknown step"):
        write_feature(path, "Typo", ["Given a Deploymnet web with 3 replicas"])
    assert "Typo" not in path.read_text(), "a bad save leaves the file as it was"
    with pytest.raises(UserError, match="already in the file"):
        write_feature(path, "Drain", ["Given a Deployment web with 3 replicas"])
    with pytest.raises(UserError, match="no step has run"):
        write_feature(tmp_path / "empty.feature", "Nothing", [])
    assert not (tmp_path / "empty.feature").exists()


def test_parameters_go_right_after_the_parameters_cell():
    book = new_notebook(cells=[new_code_cell("%load_ext x"), new_code_cell("shape = 'a'"),
                               new_code_cell("use(shape)")])
    book.cells[1].metadata["tags"] = ["parameters"]
    inject(book, {"shape": "clusters/ten-small-nodes.yaml"})
    assert [c.source for c in book.cells][1:3] == [
        "shape = 'a'", "# injected parameters\nshape = 'clusters/ten-small-nodes.yaml'"]
    nbformat.validate(book)


CELL = '''
# set-up
Given a cluster with 3 nodes
Given I apply:
    """
    kind: ConfigMap
    metadata:
      name: c
    """
Then within 30 seconds configmap/c exists
'''


def test_a_cell_s_steps_carry_the_yaml_block_under_them():
    steps = steps_with_blocks(CELL)
    assert [line for line, _ in steps] == ["Given a cluster with 3 nodes", "Given I apply:",
                                           "Then within 30 seconds configmap/c exists"]
    assert steps[1][1] == "kind: ConfigMap\nmetadata:\n  name: c\n"
    assert steps[0][1] is None and steps[2][1] is None
    with pytest.raises(UserError, match="line 4: the \"\"\" block is never closed"):
        steps_with_blocks('Given a cluster with 3 nodes\nGiven I apply:\n\n"""\nkind: X\n')
    with pytest.raises(UserError, match="line 1: a ``` block with no step above it"):
        steps_with_blocks("```\nkind: X\n```\n")


def test_a_saved_step_keeps_its_block_between_delimiter_lines():
    block = scenario_block("Apply", [("Given I apply:", "kind: ConfigMap\nmetadata:\n"
                                                        "  name: c\n")])
    assert block.splitlines() == ["  Scenario: Apply", "    Given I apply:", '      """',
                                  "      kind: ConfigMap", "      metadata:",
                                  "        name: c", '      """']
