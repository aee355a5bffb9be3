#!/usr/bin/env python3
"""A bare NATS client for the security tests of the NATS transport
(tests/nats/run.sh): it speaks the server's text protocol itself, so that
the test can play an attacker that holds no secret.

  natsraw.py relay PORT FROM_SUBJECT TO_SUBJECT COUNT_FILE
      forwards every message published on FROM_SUBJECT to TO_SUBJECT,
      unchanged (a frame of one run or lifeline replayed as another's),
      and writes how many it forwarded to COUNT_FILE once subscribed (0)
      and after each one
  natsraw.py request PORT SUBJECT [PAYLOAD]
      one request (a reply subject of its own, 10 s at most); prints the
      reply's data (e.g. $JS.API.STREAM.INFO.NAME: a stream's state)
  natsraw.py nkey SEED_FILE PUB_FILE
      writes a fresh NKey user seed (SU...) and its public key (U...), via
      openssl for the Ed25519 public key
  natsraw.py unname PORT BUCKET KEY
      rewrites the JSON record under KEY in the key-value bucket BUCKET
      without its "lifelines" (the names), as an earlier zgc wrote it
  natsraw.py unsigned PORT PORT_FILE COUNT_FILE
      a TCP proxy to the server at PORT, listening on a port of its own
      (written to PORT_FILE): every connection's bytes go through both
      ways, but the first connection's CONNECT loses its "sig" (the
      signature of the server's nonce): a login sent without its
      signature, as the NATS C client sometimes sends one.  COUNT_FILE:
      how many connections it took so far
"""
import base64
import os
import socket
import subprocess
import sys


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def b32(data):
    return base64.b32encode(data).decode().rstrip("=")


def nkey(seed_file, pub_file):
    raw = os.urandom(32)
    # PKCS#8 of an Ed25519 private key: a fixed prefix, then the seed
    der = bytes.fromhex("302e020100300506032b657004220420") + raw
    pub_der = subprocess.run(["openssl", "pkey", "-inform", "DER", "-pubout", "-outform", "DER"],
                             input=der, capture_output=True, check=True).stdout
    pub = pub_der[-32:]
    seed = bytes([(18 << 3) | ((20 << 3) >> 5), ((20 << 3) & 31) << 3]) + raw
    seed += crc16(seed).to_bytes(2, "little")
    key = bytes([20 << 3]) + pub
    key += crc16(key).to_bytes(2, "little")
    fd = os.open(seed_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, (b32(seed) + "\n").encode())
    os.close(fd)
    with open(pub_file, "w") as f:
        f.write(b32(key) + "\n")


def relay(port, src, dst, count_file):
    s = socket.create_connection(("127.0.0.1", int(port)))
    f = s.makefile("rb")
    f.readline()  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
    s.sendall(("SUB %s 1\r\nPING\r\n" % src).encode())
    while not f.readline().startswith(b"PONG"):
        pass
    with open(count_file, "w") as c:  # subscribed: 0 so far
        c.write("0\n")
    n = 0
    while True:
        line = f.readline()
        if not line:
            return
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"MSG "):
            size = int(line.split()[-1])
            data = f.read(size + 2)[:size]
            s.sendall(("PUB %s %d\r\n" % (dst, size)).encode() + data + b"\r\n")
            n += 1
            with open(count_file, "w") as c:
                c.write("%d\n" % n)


def connect(port):
    """A connection to the server at port that receives on _raw.reply."""
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    f = s.makefile("rb")
    f.readline()  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
    s.sendall(b"SUB _raw.reply 1\r\n")
    return s, f


def request(port, subject, payload=""):
    s, f = connect(port)
    sys.stdout.write(ask(s, f, subject, payload.encode()).decode() + "\n")


def ask(s, f, subject, data):
    """One request on connection s (file f): the reply's data."""
    s.sendall(("PUB %s _raw.reply %d\r\n" % (subject, len(data))).encode() + data + b"\r\n")
    while True:
        line = f.readline()
        if not line:
            sys.exit("natsraw.py: the server closed the connection")
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"-ERR"):
            sys.exit("natsraw.py: " + line.decode().strip())
        elif line.startswith(b"MSG "):
            size = int(line.split()[-1])
            return f.read(size + 2)[:size]


def unname(port, bucket, key):
    import json

    s, f = connect(port)
    subject = "$KV.%s.%s" % (bucket, key)
    got = json.loads(
        ask(s, f, "$JS.API.STREAM.MSG.GET.KV_" + bucket, json.dumps({"last_by_subj": subject}).encode())
    )
    if "message" not in got:
        sys.exit("natsraw.py: no %s in bucket %s: %s" % (key, bucket, got))
    record = json.loads(base64.b64decode(got["message"]["data"]))
    record.pop("lifelines", None)
    ack = json.loads(ask(s, f, subject, json.dumps(record).encode()))
    if "error" in ack:
        sys.exit("natsraw.py: the record was not stored: %s" % ack)


def copy(src, dst, first_line=None):
    try:
        if first_line:
            dst.sendall(first_line(src))
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def unsigned(port, port_file, count_file):
    import json
    import threading

    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % lsock.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)

    def strip(src):
        # the client's first line, its CONNECT, without "sig"
        buf = b""
        while b"\r\n" not in buf:
            data = src.recv(65536)
            if not data:
                return buf
            buf += data
        line, rest = buf.split(b"\r\n", 1)
        if line.startswith(b"CONNECT "):
            opts = json.loads(line[8:])
            opts.pop("sig", None)
            line = b"CONNECT " + json.dumps(opts).encode()
        return line + b"\r\n" + rest

    n = 0
    while True:
        c, _ = lsock.accept()
        s = socket.create_connection(("127.0.0.1", int(port)))
        n += 1
        with open(count_file, "w") as f:
            f.write("%d\n" % n)
        threading.Thread(target=copy, args=(s, c), daemon=True).start()
        threading.Thread(target=copy, args=(c, s, strip if n == 1 else None), daemon=True).start()


if __name__ == "__main__":
    if sys.argv[1] == "relay":
        relay(*sys.argv[2:6])
    elif sys.argv[1] == "request":
        request(*sys.argv[2:5])
    elif sys.argv[1] == "nkey":
        nkey(*sys.argv[2:4])
    elif sys.argv[1] == "unname":
        unname(*sys.argv[2:5])
    elif sys.argv[1] == "unsigned":
        unsigned(*sys.argv[2:5])
    else:
        sys.exit("natsraw.py: unknown command " + sys.argv[1])
