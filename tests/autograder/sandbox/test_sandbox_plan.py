"""The sandbox's plan, without running it: the bubblewrap command line and its mounts.

These tests build the command that :mod:`autograder.sandbox` would run and read it as bubblewrap
does, option by option, so they run on every machine, bubblewrap or not. The real sandbox is
exercised in ``tests/autograder/sandbox/test_sandbox.py``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import SandboxConfig, SandboxError, plan


def _ops(args: list[str]) -> list[tuple]:
    """bwrap's file-system options as (option, path...) tuples, in order."""
    takes = {"--tmpfs": 1, "--ro-bind": 2, "--bind": 2, "--dir": 1, "--remount-ro": 1,
             "--perms": 1, "--size": 1}
    out, i = [], 0
    while i < len(args):
        n = takes.get(args[i], 0)
        if args[i] in ("--tmpfs", "--ro-bind", "--bind", "--dir", "--remount-ro"):
            out.append((args[i], *args[i + 1:i + 1 + n]))
        i += 1 + n
    return out


@pytest.fixture
def tree() -> dict[str, Path]:
    """Folders outside ``/tmp``, which the sandbox replaces by a private one as a whole."""
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="sandbox-plan-"))
    yield _make_tree(base)
    shutil.rmtree(base)


def _make_tree(tmp_path: Path) -> dict[str, Path]:
    names = ["course", "course/solutions", "course/coursedata", "home", "venv", "work/sub",
             "course/hidden_too"]
    paths = {n: tmp_path / n for n in names}
    for p in paths.values():
        p.mkdir(parents=True, exist_ok=True)
    paths["blocker"] = tmp_path / "blocker.py"
    paths["blocker"].write_text("raise ImportError\n")
    return paths


def _plan(tree, **kw):
    args = plan._mount_args(
        hidden=kw.get("hidden", [tree["course"], tree["home"], tree["course/hidden_too"]]),
        packages=kw.get("packages", [tree["course/solutions"]]),
        visible=kw.get("visible", [tree["course/coursedata"], tree["venv"]]),
        writable=kw.get("writable", [tree["work/sub"]]), tmp_bytes=2**20,
        blocker=tree["blocker"])
    return _ops(args)


def test_hidden_folders_become_empty_read_only_tmpfs(tree):
    ops = _plan(tree)
    for name in ("course", "home"):
        path = str(tree[name])
        assert ("--tmpfs", path) in ops and ("--remount-ro", path) in ops
        assert ops.index(("--tmpfs", path)) < ops.index(("--remount-ro", path))
    assert ("--tmpfs", "/tmp") in ops, "a private /tmp"


def test_a_folder_inside_a_hidden_one_is_not_mounted_again(tree):
    ops = _plan(tree)
    assert not any(str(tree["course/hidden_too"]) in op[1:] for op in ops), ops


def test_a_visible_folder_inside_a_hidden_one_is_bound_back_after_it(tree):
    ops = _plan(tree)
    course, data = str(tree["course"]), str(tree["course/coursedata"])
    assert ops.index(("--tmpfs", course)) < ops.index(("--ro-bind", data, data))
    assert ("--ro-bind", str(tree["venv"]), str(tree["venv"])) in ops


def test_a_hidden_package_gets_a_blocker_as_its_init(tree):
    ops = _plan(tree, packages=[tree["course/solutions"]], hidden=[tree["home"]])
    pkg = str(tree["course/solutions"])
    assert ("--tmpfs", pkg) in ops
    assert ("--ro-bind", str(tree["blocker"]), f"{pkg}/__init__.py") in ops


def test_only_the_working_folder_is_writable_and_missing_paths_are_ignored(tree):
    ops = _plan(tree, hidden=[tree["home"], tree["home"] / "does-not-exist", Path("/")])
    binds = [op for op in ops if op[0] == "--bind"]
    assert binds == [("--bind", str(tree["work/sub"]), str(tree["work/sub"]))]
    assert not any("does-not-exist" in " ".join(op) for op in ops)
    assert ("--tmpfs", "/") not in ops


def test_parents_are_mounted_before_their_children(tree):
    ops = _plan(tree)
    mounted = [op[-1] for op in ops if op[0] in ("--tmpfs", "--ro-bind", "--bind", "--dir")]
    for i, path in enumerate(mounted):
        for later in mounted[i + 1:]:
            assert not Path(path).is_relative_to(later) or path == later, (path, later)


@pytest.fixture
def argv(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/bwrap" if name == "bwrap" else None)
    (tmp_path / "run").mkdir()
    config = SandboxConfig(hidden_paths=(tree["course"],), hidden_packages=(),
                           visible_paths=(tree["venv"],), memory_mb=512, max_processes=32,
                           env={"GRADER_RESULTS_DIR": str(tree["work/sub"])})

    def build(uid=-1, workdir=tree["work/sub"]):
        return plan._sandbox_argv(config, workdir, tmp_path, uid, ["python", "-m", "kernel"])
    return build


def test_the_command_isolates_network_processes_and_environment(argv, tree):
    args = argv()
    assert args[0] == "/usr/bin/bwrap"
    for flag in ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
                 "--unshare-ipc", "--unshare-user", "--disable-userns", "--clearenv"):
        assert flag in args, flag
    assert args[-3:] == ["python", "-m", "kernel"]
    assert args[args.index("--chdir") + 1] == str(tree["work/sub"])
    env = {args[i + 1]: args[i + 2] for i, a in enumerate(args) if a == "--setenv"}
    assert env["HOME"] == "/tmp" and env["GRADER_RESULTS_DIR"] == str(tree["work/sub"])
    [limits] = [a for a in args if a.startswith("RLIMIT_AS=")]
    assert f"RLIMIT_AS={512 * 2**20}" in limits and "RLIMIT_NPROC=32" in limits
    assert ("--tmpfs", str(tree["work/sub"].parent)) in _ops(args), "siblings are hidden"


def test_a_root_grader_drops_to_a_user_instead_of_a_user_namespace(argv):
    args = argv(uid=1_000_000_000)
    assert "--unshare-user" not in args and args.count("--cap-add") == 2


def test_a_working_folder_around_a_hidden_folder_is_refused(argv, tree):
    with pytest.raises(ValueError, match="contains the hidden folder"):
        argv(workdir=tree["course"].parent)


def test_without_bubblewrap_the_sandbox_refuses_with_a_reason(argv, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SandboxError, match="bubblewrap"):
        argv()


def test_every_project_checkout_on_the_path_is_hidden(tmp_path, monkeypatch):
    """Another checkout of the project on the interpreter's path (an editable install of it, a
    PYTHONPATH entry) would show its course sources, gradebook and reference to the kernel: it is
    hidden whole, as the grader's own checkout is."""
    from autograder.sandbox import config

    other = tmp_path / "other-checkout"
    (other / "course" / "source").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(other)])
    assert other.resolve() in config._default_hidden_paths()
