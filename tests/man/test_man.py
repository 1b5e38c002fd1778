"""test_man.py: the man pages (man/make-pages, help2man) and the --help
texts they are made from.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/man --pbus-build build/dev

- The pages the build made are those the current programs' --help give
  (make-pages --check): a --help changed without the pages following, a
  command without its page, or a page of a command that is gone, fails.
- --check really compares: a program whose --help differs by one word is
  found out.
- Every --help (each program, each pbus command and each command of a
  command) shows two or three examples and names its man page.
- The pages read as man pages: `man -l` renders each, with the NAME line
  help2man needs and every option of the --help.
"""
import importlib.machinery
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from pbustest.check import check

SUITE = "man"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
MAKE_PAGES = os.path.join(TOP, "man", "make-pages")


def _load_make_pages():
    """man/make-pages as a module: its program table and its reader of a
    --help's Commands: block are the ones the build uses."""
    loader = importlib.machinery.SourceFileLoader("make_pages", MAKE_PAGES)
    spec = importlib.util.spec_from_loader("make_pages", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


make_pages = _load_make_pages()
DAEMONS = [name for name, (section, _) in make_pages.PROGRAMS.items() if section == 8]


def programs(build):
    """name=command arguments of make-pages for this build tree, as man/CMakeLists.txt gives them."""
    args = [f"pbus={build.pbus}"] + [f"{d}={build.path('daemon', d)}" for d in DAEMONS]
    args.append(f"pbus-gen=env PYTHONPATH={os.path.join(TOP, 'gen')} {sys.executable} -m pbusgen")
    return args


def version(build):
    out = subprocess.run([build.pbusd, "--version"], capture_output=True, text=True).stdout
    return out.split()[-1]


def helps(build):
    """(page name, argv) of every --help that has a page."""
    found = [(name, [build.path("daemon", name)]) for name in DAEMONS]
    found.append(("pbus-gen", [sys.executable, "-m", "pbusgen"]))
    found.append(("pbus", [build.pbus]))
    for cmd in commands([build.pbus]):
        found.append((f"pbus-{cmd}", [build.pbus, cmd]))
        for sub in commands([build.pbus, cmd]):
            found.append((f"pbus-{cmd}-{sub}", [build.pbus, cmd, sub]))
    return found


def help_text(argv):
    r = subprocess.run(argv + ["--help"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "gen")))
    check(r.returncode == 0, f"{' '.join(argv)} --help: exit {r.returncode}: {r.stderr[:300]}")
    return r.stdout


def commands(argv):
    return [name for name, _ in make_pages.commands(help_text(argv))]


@pytest.fixture(scope="module")
def build(pbus_build):
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd)
    check(shutil.which("help2man"), "help2man is not installed (scripts/install-deps)")
    return pbus_build


def test_pages_are_in_step_with_help(build):
    """The build's pages are exactly what the programs' --help make now."""
    man_dir = build.path("man")
    check(os.path.isdir(os.path.join(man_dir, "man1")), f"no pages in {man_dir} (the build makes them)")
    r = subprocess.run([sys.executable, MAKE_PAGES, "--check", man_dir, version(build)] + programs(build),
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"pages out of step: {r.stderr[-2000:]}")
    n = int(re.search(r"(\d+) pages checked", r.stdout).group(1))
    expected = len(helps(build))
    check(n == expected, f"{n} pages checked, {expected} programs and commands have a --help")


def test_check_finds_a_changed_help(build, pbus_tmp):
    """A pbusd whose --help says one word more than the page: --check names
    the page (so the test above can fail)."""
    fake = os.path.join(pbus_tmp, "pbusd-changed")
    with open(fake, "w") as f:
        f.write(f"#!/bin/sh\nif [ \"$1\" = --help ]; then {build.pbusd} --help | sed 's/Own one/Own exactly one/'; "
                f"else exec {build.pbusd} \"$@\"; fi\n")
    os.chmod(fake, stat.S_IRWXU)
    args = [a if not a.startswith("pbusd=") else f"pbusd={fake}" for a in programs(build)]
    r = subprocess.run([sys.executable, MAKE_PAGES, "--check", build.path("man"), version(build)] + args,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 1, f"a changed --help was not found: rc={r.returncode} {r.stdout} {r.stderr}")
    check(re.search(r"man8/pbusd\.8 differs", r.stderr), f"the page is not named: {r.stderr}")
    check(r.stderr.count("differs") == 1, f"other pages named: {r.stderr}")


def test_every_help_has_examples_and_names_its_page(build):
    bad = []
    for page, argv in helps(build):
        text = help_text(argv)
        m = re.search(r"^Examples:\n((?:  .*\n|\n(?=  ))+)", text, re.M)
        if not m:
            bad.append(f"{page}: no Examples: block")
            continue
        examples = [l for l in m.group(1).splitlines() if re.match(r"^  \S", l)]
        if not 2 <= len(examples) <= 4:
            bad.append(f"{page}: {len(examples)} examples")
        if not re.search(rf"(man (\d )?{re.escape(page)}\b|\b{re.escape(page)}\([18]\))", text):
            bad.append(f"{page}: does not name its man page")
    check(not bad, "; ".join(bad))


def test_pages_render_with_every_option(build):
    """man -l renders each page; its NAME line is the program's, and every
    long option of the --help is in the rendered page."""
    bad = []
    for page, argv in helps(build):
        sec = 8 if page in DAEMONS else 1
        path = build.path("man", f"man{sec}", f"{page}.{sec}")
        if not os.path.exists(path):
            bad.append(f"{page}: no page")
            continue
        r = subprocess.run(["man", "-l", path], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8"))
        text = re.sub(r".\x08", "", r.stdout)
        if r.returncode != 0 or not re.search(rf"^NAME\n\s+{re.escape(page)} - \S", text, re.M):
            bad.append(f"{page}: does not render with its NAME ({r.stderr[:200]})")
            continue
        options = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", help_text(argv)))
        missing = sorted(o for o in options if o not in text.replace("\u2010", "-"))
        if missing:
            bad.append(f"{page}: {', '.join(missing)} not in the page")
    check(not bad, "; ".join(bad))
