"""TLS for gRPC and NATS from PEM files, and a local certificate authority to make those files.

Credentials are files, never inline settings: cert-manager writes `tls.crt`, `tls.key` and
`ca.crt` into a Kubernetes Secret that the pod mounts, and `memloop up --tls` (or `--cluster`)
writes the same three files per service with `generate_local_pki`. The files are read once, when a
server or channel is built: a rotated certificate takes effect when the process restarts (a
rolling restart after cert-manager renews; its default renews a month before expiry).

One CA signs every service's certificate and every server trusts only that CA, so a server accepts
a client only if it presents a certificate from the same CA (mTLS): a client with no certificate,
with a certificate from another CA, or speaking plaintext is refused during the handshake, before
any RPC (and before the bearer token is looked at).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Names every local certificate is valid for, besides the service's own name: the stack and the
# tests dial 127.0.0.1 / localhost.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class TlsFiles:
    """One party's certificate chain and key, and the CA bundle it trusts for its peers (PEM paths)."""

    cert_file: str
    key_file: str
    ca_file: str

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(certificate chain, private key, CA bundle); SystemExit naming the file that cannot be read."""
        return _read(self.cert_file), _read(self.key_file), _read(self.ca_file)

    def as_env(self, prefix: str = "MEMLOOP_TLS") -> dict[str, str]:
        """The settings that make a memloop process use these files (see `tls_from_env`)."""
        return {
            prefix: "on",
            f"{prefix}_CERT_FILE": self.cert_file,
            f"{prefix}_KEY_FILE": self.key_file,
            f"{prefix}_CA_FILE": self.ca_file,
        }


def tls_from_env(env: Mapping[str, str], prefix: str = "MEMLOOP_TLS") -> TlsFiles | None:
    """MEMLOOP_TLS=on|off (default off) and, when on, MEMLOOP_TLS_{CERT,KEY,CA}_FILE (all three required).

    The one switch: on, every gRPC server of the process requires TLS with a client certificate from
    the CA, and every channel it opens presents its certificate and verifies the peer's. Files set
    while the switch is off are refused rather than ignored: a half-configured deployment would
    otherwise run in plaintext believing it was encrypted.
    """
    switch = env.get(prefix, "").strip().lower() or "off"
    if switch not in ("on", "off"):
        raise SystemExit(f"setting {prefix}={switch!r} must be 'on' or 'off'")
    names = {part: f"{prefix}_{part}_FILE" for part in ("CERT", "KEY", "CA")}
    values = {part: env.get(name, "").strip() for part, name in names.items()}
    if switch == "off":
        given = [names[p] for p, v in values.items() if v]
        if given:
            raise SystemExit(f"{', '.join(given)} set but {prefix} is off: set {prefix}=on to use them")
        return None
    missing = [names[p] for p, v in values.items() if not v]
    if missing:
        raise SystemExit(f"{prefix}=on needs {', '.join(missing)}")
    files = TlsFiles(cert_file=values["CERT"], key_file=values["KEY"], ca_file=values["CA"])
    files.read()  # fail at start-up, naming the file, not at the first call
    return files


def server_credentials(files: TlsFiles, *, require_client_cert: bool = True) -> grpc.ServerCredentials:
    """TLS for a gRPC server; with `require_client_cert` a client must present a certificate of the CA."""
    cert, key, ca = files.read()
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=require_client_cert)


def channel_credentials(files: TlsFiles) -> grpc.ChannelCredentials:
    """TLS for a gRPC channel: verify the server against the CA and present our certificate."""
    cert, key, ca = files.read()
    return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)


def client_ssl_context(files: TlsFiles) -> ssl.SSLContext:
    """An `ssl` client context (NATS): verify the server against the CA, present our certificate."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=files.ca_file)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(files.cert_file, files.key_file)
    return context


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SystemExit(f"TLS file {path!r}: cannot read it ({exc.strerror})") from exc


# --- a local certificate authority ---------------------------------------------------------------


@dataclass(frozen=True)
class LocalPki:
    """A directory holding `ca.pem` and, per name, `<name>.pem` + `<name>-key.pem`."""

    directory: Path

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.pem"

    def files(self, name: str) -> TlsFiles:
        return TlsFiles(
            cert_file=str(self.directory / f"{name}.pem"),
            key_file=str(self.directory / f"{name}-key.pem"),
            ca_file=str(self.ca_file),
        )


def generate_local_pki(
    directory: Path,
    names: Iterable[str],
    *,
    hosts: Iterable[str] = LOCAL_HOSTS,
    days: int = 365,
    ca_name: str = "memloop local CA",
) -> LocalPki:
    """A CA (kept if `directory` already has one) and, per name, a fresh certificate and key signed by it.

    Each certificate serves both ends (server and client authentication): a service is a server to
    its callers and a client of its peers. Its names are the service name itself (a Kubernetes
    Service or compose host of that name) and `hosts`. Keys are ECDSA P-256, readable by the owner only.
    """
    directory.mkdir(parents=True, exist_ok=True)
    pki = LocalPki(directory)
    ca_key_file = directory / "ca-key.pem"
    if pki.ca_file.exists() and ca_key_file.exists():
        ca_cert = x509.load_pem_x509_certificate(pki.ca_file.read_bytes())
        loaded = serialization.load_pem_private_key(ca_key_file.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise SystemExit(f"{ca_key_file}: not an EC private key")
        ca_key = loaded
    else:
        ca_key, ca_cert = _new_ca(ca_name, days=max(days, 3650))
        _write_key(ca_key_file, ca_key)
        pki.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    host_list = list(hosts)
    for name in names:
        key, cert = _new_leaf(name, [name, *host_list], ca_key, ca_cert, days=days)
        files = pki.files(name)
        _write_key(Path(files.key_file), key)
        Path(files.cert_file).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return pki


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _new_ca(name: str, *, days: int) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(_now() + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _new_leaf(
    name: str,
    alt_names: list[str],
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    *,
    days: int,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for alt in dict.fromkeys(alt_names):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(alt)))
        except ValueError:
            sans.append(x509.DNSName(alt))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(_now() + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_bytes(pem)
