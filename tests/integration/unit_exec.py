#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""unit_exec.py - runs a systemd service unit's commands as systemd would
where no systemd is PID 1 (for tests/integration/systemd_units.sh).

  unit_exec.py UNIT DIR [NAME=VALUE...]

Reads UNIT's [Service] section: EnvironmentFile= (a leading '-' makes it
optional), Environment=, ExecStartPre=, ExecStart=, Type=. Runs each
ExecStartPre (it must exit 0), then ExecStart with the environment (the
NAME=VALUE arguments last, e.g. private socket paths), $VAR and ${VAR}
expanded as systemd does (an unquoted $VAR splits into words). For
Type=notify it passes NOTIFY_SOCKET (an abstract datagram socket) and
waits up to 20 s for READY=1. Writes into DIR: pid (the service's main
process), ready ("notify" when READY=1 came, "started" for Type=simple,
or "failed: why"), and rc (the exit status once it exits; 128+N for a
signal). Stays until the service exits.
"""
import os
import re
import shlex
import socket
import subprocess
import sys
import time


def parse_unit(path):
    keys = {}
    section = None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            k, _, v = line.partition("=")
            keys.setdefault((section, k.strip()), []).append(v.strip())
    return keys


def read_env_file(path, env):
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            k, _, v = line.partition("=")
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
                v = v[1:-1]
            env[k.strip()] = v


def expand(cmdline, env):
    out = []
    for word in shlex.split(cmdline):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            out.extend(env.get(m.group(1), "").split())
            continue
        out.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                          lambda g: env.get(g.group(1), ""), word))
    # A leading '-' (ignore failure) or '@' is a systemd prefix, not a path.
    if out and out[0][:1] in "-@":
        out[0] = out[0][1:]
    return out


def main():
    unit, d = sys.argv[1], sys.argv[2]
    extra = dict(a.split("=", 1) for a in sys.argv[3:])
    keys = parse_unit(unit)
    env = dict(os.environ)
    for ef in keys.get(("Service", "EnvironmentFile"), []):
        optional = ef.startswith("-")
        ef = ef.lstrip("-")
        if os.path.exists(ef):
            read_env_file(ef, env)
        elif not optional:
            open(os.path.join(d, "ready"), "w").write("failed: no %s\n" % ef)
            return 1
    for e in keys.get(("Service", "Environment"), []):
        for item in shlex.split(e):
            k, _, v = item.partition("=")
            env[k] = v
    env.update(extra)
    for pre in keys.get(("Service", "ExecStartPre"), []):
        rc = subprocess.call(expand(pre, env), env=env)
        if rc != 0:
            open(os.path.join(d, "ready"), "w").write("failed: ExecStartPre %s exited %d\n" % (pre, rc))
            return 1
    svc_type = keys.get(("Service", "Type"), ["simple"])[-1]
    sock = None
    if svc_type == "notify":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = "\0pfc-unit-exec-%d" % os.getpid()
        sock.bind(name)
        env["NOTIFY_SOCKET"] = "@" + name[1:]
    argv = expand(keys[("Service", "ExecStart")][-1], env)
    child = subprocess.Popen(argv, env=env)
    open(os.path.join(d, "pid"), "w").write("%d\n" % child.pid)
    state = "started"
    if sock is not None:
        sock.settimeout(0.2)
        deadline = time.time() + 20
        state = "failed: no READY=1 within 20 s"
        while time.time() < deadline and child.poll() is None:
            try:
                msg = sock.recv(4096).decode(errors="replace")
            except socket.timeout:
                continue
            if "READY=1" in msg.split("\n"):
                state = "notify"
                break
    open(os.path.join(d, "ready"), "w").write(state + "\n")
    rc = child.wait()
    open(os.path.join(d, "rc"), "w").write("%d\n" % (128 - rc if rc < 0 else rc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
