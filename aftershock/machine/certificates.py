"""Certificates and kubeconfigs for one local cluster (ECDSA P-256: generated in milliseconds)."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVICE_IP = "10.96.0.1"
SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local")


@dataclass(frozen=True)
class Identity:
    """A client identity: who the audit log will say acted."""

    file_stem: str
    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity("admin", "aftershock", ("system:masters",))
CONTROLLER_MANAGER = Identity("kube-controller-manager", "system:kube-controller-manager")
SCHEDULER = Identity("kube-scheduler", "system:kube-scheduler")
KWOK = Identity("kwok-controller", "kwok-controller", ("system:masters",))
IDENTITIES = (ADMIN, CONTROLLER_MANAGER, SCHEDULER, KWOK)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _name(common: str, groups: tuple[str, ...] = ()) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
    return x509.Name([*parts, x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=365))
    )


@dataclass(frozen=True)
class Pki:
    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def serving_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def serving_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def sa_key(self) -> Path:
        return self.directory / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.directory / "sa.pub"

    def client_cert(self, who: Identity) -> Path:
        return self.directory / f"{who.file_stem}.crt"

    def client_key(self, who: Identity) -> Path:
        return self.directory / f"{who.file_stem}.key"


def write_private(path: Path, data: bytes) -> None:
    """A file only its owner may read, from the moment it exists: created with mode 0600
    (written and then chmod'ed, a key would be readable by anyone in between), and one that
    was there already made 0600 before a byte of the new content goes in."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        os.fchmod(descriptor, 0o600)  # O_CREAT leaves the mode of a file that was there
        out.write(data)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    if private:
        write_private(path, data)
    else:
        path.write_bytes(data)


def create(directory: Path) -> Pki:
    """A CA, the apiserver's serving cert, one client cert per identity, the SA signing key."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory)
    ca_key = _key()
    ca_name = _name("aftershock-ca")
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False),
                       critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    _write(pki.ca_cert, _pem_cert(ca))
    _write(pki.ca_key, _pem_key(ca_key), private=True)

    serving_key = _key()
    alt_names = [x509.DNSName(name) for name in SERVER_NAMES] + [
        x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", SERVICE_IP)
    ]
    serving = (
        _builder(_name("kube-apiserver"), ca_name, serving_key.public_key())
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write(pki.serving_cert, _pem_cert(serving))
    _write(pki.serving_key, _pem_key(serving_key), private=True)

    for who in IDENTITIES:
        key = _key()
        cert = (
            _builder(_name(who.user, who.groups), ca_name, key.public_key())
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        _write(pki.client_cert(who), _pem_cert(cert))
        _write(pki.client_key(who), _pem_key(key), private=True)

    sa_key = _key()
    _write(pki.sa_key, _pem_key(sa_key), private=True)
    _write(pki.sa_pub, sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pki


def serving_pair(directory: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> str:
    """A CA of its own and a serving certificate for ``hosts`` signed by it, as a webhook
    server expects them (ca.crt, tls.crt, tls.key in ``directory``); the CA as a caBundle."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    ca_key, key = _key(), _key()
    ca_name = _name("aftershock-serving-ca")
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    serving = (_builder(_name(hosts[0]), ca_name, key.public_key())
               .add_extension(x509.SubjectAlternativeName(names), critical=False)
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                              critical=False)
               .sign(ca_key, hashes.SHA256()))
    _write(directory / "ca.crt", _pem_cert(ca))
    _write(directory / "tls.crt", _pem_cert(serving))
    _write(directory / "tls.key", _pem_key(key), private=True)
    return _b64(directory / "ca.crt")


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, pki: Pki, who: Identity, server: str, cluster: str) -> Path:
    """A self-contained kubeconfig (certs embedded) for one identity; never the user's default."""
    user = f"{cluster}-{who.file_stem}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {
            "server": server, "certificate-authority-data": _b64(pki.ca_cert)}}],
        "users": [{"name": user, "user": {
            "client-certificate-data": _b64(pki.client_cert(who)),
            "client-key-data": _b64(pki.client_key(who))}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster,
        "preferences": {},
    }
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())  # a client key
    return path
