"""Reports never carry Secret values, tokens or client keys."""

import base64
import json

from aftershock.report.redact import MASK, Redactor, redact_object

TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLWJ5dGVz"


def test_known_secret_values_are_masked_in_plain_and_base64_forms():
    redactor = Redactor()
    redactor.add_secret({"kind": "Secret", "data": {"password": base64.b64encode(
        b"hunter2-correct-horse").decode()}, "stringData": {"api-key": "sk-live-12345"}})
    text = ("read hunter2-correct-horse from the secret; data was "
            f"{base64.b64encode(b'hunter2-correct-horse').decode()}; key sk-live-12345")
    cleaned = redactor.text(text)
    assert "hunter2" not in cleaned and "sk-live" not in cleaned
    assert base64.b64encode(b"hunter2-correct-horse").decode() not in cleaned
    assert cleaned.count(MASK) == 3


def test_tokens_and_keys_are_masked_without_being_told():
    kubeconfig = ("users:\n- name: u\n  user:\n    token: " + TOKEN + "\n"
                  "    client-key-data: LS0tLS1CRUdJTiBQUklWQVRF\n")
    cleaned = Redactor().text(kubeconfig)
    assert TOKEN not in cleaned and "LS0tLS1CRUdJTiBQUklWQVRF" not in cleaned
    assert "token: [REDACTED]" in cleaned
    header = Redactor().text("Authorization: Bearer abcdefghijklmnop123")
    assert "abcdefghijklmnop123" not in header
    pem = "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----\ny"
    assert Redactor().text(pem) == f"x\n{MASK}\ny"
    logged = json.dumps({"token": "opaque-token-value", "other": "kept"})
    assert "opaque-token-value" not in Redactor().text(logged)
    assert "kept" in Redactor().text(logged)


def test_ordinary_text_is_left_alone():
    text = "pod/ns/web-0 Running on node/node-1; R1: PASS: at most 3 live pods"
    assert Redactor(["ab"]).text(text) == text  # too short to be a secret worth masking


def test_a_tree_is_rewritten_in_place_and_binaries_left(tmp_path):
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "impl.log"
    log.write_text(f"using {TOKEN}\n")
    png = tmp_path / "timeline.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + TOKEN.encode())
    changed = Redactor().tree(tmp_path)
    assert changed == [log]
    assert TOKEN not in log.read_text()
    assert png.read_bytes().endswith(TOKEN.encode())


def test_a_secret_object_shows_its_keys_not_its_values():
    secret = {"kind": "Secret", "metadata": {"name": "db"}, "data": {"password": "aHVudGVyMg=="}}
    assert redact_object(secret)["data"] == {"password": MASK}
    assert secret["data"]["password"] == "aHVudGVyMg=="  # the original is untouched


def test_a_service_account_token_secret_masks_its_token_not_its_namespace():
    """Grove makes a token Secret per PodCliqueSet; its `namespace` key holds the scenario's
    namespace, which was masked in every report of the run (every object's namespace)."""
    redactor = Redactor()
    encoded = {key: base64.b64encode(value.encode()).decode() for key, value in {
        "token": TOKEN, "namespace": "a-partial-regression-261815",
        "ca.crt": "-----BEGIN CERTIFICATE-----"}.items()}
    redactor.add_secret({"kind": "Secret", "type": "kubernetes.io/service-account-token",
                         "data": encoded})
    cleaned = redactor.text(f"pod/a-partial-regression-261815/web sent {TOKEN}")
    assert cleaned == f"pod/a-partial-regression-261815/web sent {MASK}"
