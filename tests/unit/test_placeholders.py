"""One placeholder syntax across a profile and its manifests: only the names the harness fills
are replaced; a literal $, a YAML flow mapping and an unknown {placeholder} survive."""

from aftershock.profile.placeholders import fill


def test_only_known_placeholders_are_filled():
    text = 'args: ["--ns={namespace}", "echo $HOME ${X}", "{unknown}"]\nlabels: {app: {name}}'
    assert fill(text, {"namespace": "ns-1", "name": "web"}) == (
        'args: ["--ns=ns-1", "echo $HOME ${X}", "{unknown}"]\nlabels: {app: web}')


def test_values_of_any_type_are_written_as_text():
    assert fill("replicas: {replicas}", {"replicas": 3}) == "replicas: 3"
