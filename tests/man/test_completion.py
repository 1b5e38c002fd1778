"""test_completion.py: bash completion for pbus (dist/bash-completion/pbus)
in a real bash, against a real pbusd serving tests/cli/fixtures/test.pbs.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/man --pbus-build build/dev

Each case sources the script in `bash --norc`, sets COMP_LINE/COMP_POINT
(and COMP_WORDS split at '=' as readline splits them) and calls the
completion function, as bash does on TAB; the words are COMPREPLY's.
"""
import os
import re
import subprocess

import pytest

from pbustest.check import check

SUITE = "man"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(TOP, "dist", "bash-completion", "pbus")

# test.pbs: the writable parameters (not readonly), in schema order.
READONLY = {"identity.manufacturer", "identity.serial", "uptime_ns", "measured_voltage", "temperature"}


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_context):
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd)
    pbus_context.daemon = pbus_context.start_daemon()
    return pbus_context


def complete(ctx, line, instance_env=False):
    """COMPREPLY for the command line @line (the cursor at its end)."""
    line = f"{ctx.pbus} {line}"
    words = re.findall(r"[^\s=]+|=", line) + ([""] if line.endswith((" ", "=")) else [])
    script = (f"source {SCRIPT}\n"
              "COMP_WORDBREAKS=$' \\t\\n\"\\'><=;|&(:'\n"
              'COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))\n'
              "_pbus\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = ctx.env(instance=instance_env)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", line] + words,
                       capture_output=True, text=True, env=env, timeout=60)
    check(r.returncode == 0 and r.stderr == "", f"completing {line!r}: rc={r.returncode} {r.stderr[:500]}")
    return [w for w in r.stdout.split("\n") if w]


def params(ctx):
    return [p["name"] for p in ctx.dump()["parameters"]]


def test_script_is_valid_bash():
    r = subprocess.run(["bash", "-n", SCRIPT], capture_output=True, text=True)
    check(r.returncode == 0, f"bash -n: {r.stderr}")


def test_commands_come_from_help(ctx):
    out = ctx.ok("--help", instance=False).out
    block = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    listed = [l.split()[0] for l in block.splitlines()]
    got = complete(ctx, "")
    check(got == listed, f"commands {got}, pbus --help lists {listed}")
    check(complete(ctx, "ge") == ["get"], "ge -> get")


def test_instance_names(ctx):
    got = complete(ctx, f"-i {ctx.instance[:-2]}")
    check(ctx.instance in got, f"-i {ctx.instance[:-2]}: {got}")
    got = complete(ctx, f"--instance={ctx.instance[:-1]}")
    check(got == [ctx.instance], f"--instance=: {got}")


def test_parameter_names_of_the_running_instance(ctx):
    names = params(ctx)
    check(complete(ctx, f"-i {ctx.instance} get ") == names, "get: every parameter")
    check(complete(ctx, f"-i {ctx.instance} get volt") == ["voltage_setpoint"], "get volt")
    check(complete(ctx, "watch volt", instance_env=True) == ["voltage_setpoint"], "$PBUS_INSTANCE")
    check(complete(ctx, f"--instance={ctx.instance} list ide") == ["identity.manufacturer", "identity.serial"],
          "--instance= then list")


def test_set_offers_writable_names_then_values(ctx):
    got = complete(ctx, f"-i {ctx.instance} set ")
    want = [n + "=" for n in params(ctx) if n not in READONLY]
    check(got == want, f"set: {got}, want {want}")
    check(complete(ctx, f"-i {ctx.instance} set mode=") == ["OFF", "ON", "TRIPPED", "STANDBY"], "enum labels")
    check(complete(ctx, f"-i {ctx.instance} set mode=ST") == ["STANDBY"], "enum label prefix")
    check(complete(ctx, f"-i {ctx.instance} set output_enable=") == ["true", "false"], "bool values")
    check(complete(ctx, f"-i {ctx.instance} set gain=") == [], "a float has no values to offer")


def test_options_come_from_each_help(ctx):
    got = complete(ctx, "get --")
    for o in ("--json", "--verbose", "--instance", "--help"):
        check(o in got, f"get --: {o} missing from {got}")
    got = complete(ctx, "gpio set --")
    check("--hold-ms" in got, f"gpio set --: {got}")
    check(complete(ctx, "gpio ") == ["detect", "info", "get", "set", "monitor"] or
          set(complete(ctx, "gpio ")) >= {"detect", "info", "get", "set", "monitor"}, "gpio commands")


def test_no_instance_completes_nothing_quietly(ctx):
    check(complete(ctx, "-i no-such-instance get ") == [], "an instance that is not there")
    check(complete(ctx, "get ") == [], "no -i and no $PBUS_INSTANCE")
