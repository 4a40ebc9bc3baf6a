# aftershock's key pair ({tls_dir}: ca.crt, tls.crt, tls.key) under the names Kruise's fs cert
# writer reads (pkg/webhook/util/writer/fs.go), as links: Kruise keeps a link it finds there
# (its atomic writer makes only the links that are missing), and takes the pair as its own when
# the certificate is valid for WEBHOOK_HOST, so it makes none. It reads a CA key too, but uses
# it only to sign a pair it makes: there is none here, and an empty file stands for it.
set -e
mkdir -p {files}/certs
cd {files}/certs
ln -sfn {tls_dir}/ca.crt ca-cert.pem
ln -sfn {tls_dir}/tls.crt cert.pem
ln -sfn {tls_dir}/tls.crt tls.crt
ln -sfn {tls_dir}/tls.key key.pem
ln -sfn {tls_dir}/tls.key tls.key
ln -sfn /dev/null ca-key.pem
