#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# ctest doc_examples: runs every fenced example of README.md and docs/**/*.md and compares what it prints.
"""Run the fenced examples of the docs (the marker vocabulary is in CONTRIBUTING.md, "Examples in the docs").

Usage: doc_examples.py --source DIR [--cli-dir DIR] [--python-path DIR] [--cxx-config FILE] [--work DIR]
                       [--only SUBSTRING] [--list]

Every fence needs a language. `python` blocks run in a fresh interpreter (this one) with the built
module on PYTHONPATH; a trailing comment on a `print(...)` line or on a bare expression is what that line
prints (its first line; `...` matches anything). `console`/`sh`/`bash` blocks with `$ ` lines run each
command in one bash session (the built CLI first on PATH) and compare the lines that follow it; a `sh`
block without `$ ` lines runs as a script. `cpp` blocks with `main` are compiled, run, and each trailing
`// expected` comment on a print line must match a printed line, in order; other `cpp` blocks are
fragments, compiled (syntax and types) inside a function whose parameters a `given:` marker names.
`text` blocks are not code. A block marked `skip KIND: REASON` is counted and listed with its reason.
"""
import argparse
import ast
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize

SKIP_KINDS = {
    "gpu": "needs a GPU",
    "machine": "needs another machine or changes this one",
    "slow": "takes minutes (a build, a benchmark, the whole suite)",
    "placeholder": "names things the reader supplies",
}
SHELL = {"console", "sh", "shell", "bash"}
CPP = {"cpp", "c++"}
LANGUAGES = SHELL | CPP | {"python", "text"}
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)([^`\s]*)\s*$")


class Block:
    def __init__(self, path, line, lang, text, markers):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        self.skip = None  # (kind, reason)
        self.given = None
        self.unchecked = None
        self.cont = False
        for m in markers:
            if m == "continue":
                self.cont = True
            elif m.startswith("skip "):
                kind, _, reason = m[5:].partition(":")
                if kind.strip() not in SKIP_KINDS or not reason.strip():
                    raise SystemExit(f"{self.where}: bad marker '{m}': skip KIND: REASON, KIND one of "
                                     + ", ".join(SKIP_KINDS))
                self.skip = (kind.strip(), reason.strip())
            elif m.startswith("given:"):
                self.given = m[6:].strip()
            elif m.startswith("unchecked-output:") and m[17:].strip():
                self.unchecked = m[17:].strip()
            else:
                raise SystemExit(f"{self.where}: unknown doc-test marker '{m}' (see CONTRIBUTING.md)")

    @property
    def where(self):
        return f"{self.path}:{self.line}"


def parse(path, rel):
    """The fenced blocks of one Markdown file, continuations joined to their predecessor."""
    lines = pathlib.Path(path).read_text().splitlines()
    blocks, markers, i = [], [], 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            markers.append(m.group(1))
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if markers and lines[i].strip():
                raise SystemExit(f"{rel}:{i + 1}: a doc-test marker must come right before a fence")
            i += 1
            continue
        indent, ticks, lang = f.group(1), f.group(2), f.group(3).lower()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i].strip() != ticks:
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i == len(lines):
            raise SystemExit(f"{rel}:{start}: unclosed fence")
        i += 1
        if not lang:
            raise SystemExit(f"{rel}:{start}: a fence without a language: name it (`text` for what is not code)")
        if lang not in LANGUAGES and not any(m.startswith("skip ") for m in markers):
            raise SystemExit(f"{rel}:{start}: no runner for ```{lang}: use one of {sorted(LANGUAGES)} "
                             "or mark the block `skip KIND: REASON`")
        block = Block(rel, start, lang, "\n".join(body) + "\n", markers)
        markers = []
        if block.cont:
            same = [b for b in blocks if b.lang == block.lang]  # the nearest earlier block of its language
            if not same:
                raise SystemExit(f"{block.where}: `continue` needs a ```{lang} block before it in the same file")
            prev = same[-1]
            prev.text += "\n" * (block.line - prev.line - prev.text.count("\n"))  # keep line numbers
            prev.text += block.text
            if block.skip and not prev.skip:
                raise SystemExit(f"{block.where}: a continuation cannot be skipped alone; mark the first block")
            continue
        blocks.append(block)
    if markers:
        raise SystemExit(f"{rel}: a doc-test marker at the end of the file, with no fence after it")
    return blocks


# ---- matching ----------------------------------------------------------------------------------------

def line_matches(want, got):
    """`...` in an expected line matches any text; trailing blanks are ignored."""
    want, got = want.rstrip(), got.rstrip()
    parts = want.split("...")
    pattern = ".*".join([re.escape(p.rstrip()) for p in parts[:-1]] + [re.escape(parts[-1])])
    return re.fullmatch(pattern, got, re.S) is not None


def lines_match(want, got):
    """Expected lines against printed lines; a line that is only `...` matches any number of lines."""
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(lines_match(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and line_matches(want[0], got[0]) and lines_match(want[1:], got[1:])


def diff(want, got):
    """The expected and printed lines from the first one that differs (`...` lines are not resolved)."""
    k = 0
    while k < min(len(want), len(got)) and want[k].strip() != "..." and line_matches(want[k], got[k]):
        k += 1
    return (f"from line {k + 1} of the expected output:\nexpected:\n" + "\n".join(want[k:k + 12])
            + "\nprinted:\n" + "\n".join(got[k:k + 12]))


# ---- python ------------------------------------------------------------------------------------------

def expected_comments(code):
    """{line: comment text} for comments that follow code on the same line."""
    out = {}
    toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    for k, t in enumerate(toks):
        if t.type == tokenize.COMMENT and k and toks[k - 1].start[0] == t.start[0] \
                and toks[k - 1].type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            out[t.start[0]] = t.string[1:].strip()
    return out


class _Instrument(ast.NodeTransformer):
    def __init__(self, comments):
        self.comments = comments

    def visit_Expr(self, node):
        want = self.comments.get(node.end_lineno)
        if want is None:
            return node
        is_print = isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
            and node.value.func.id == "print"
        if is_print:
            thunk = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                               body=node.value)
            call = ast.Call(ast.Name("__doc_print__", ast.Load()), [ast.Constant(node.lineno), ast.Constant(want), thunk], [])
        else:
            call = ast.Call(ast.Name("__doc_value__", ast.Load()), [ast.Constant(node.lineno), ast.Constant(want), node.value], [])
        return ast.copy_location(ast.Expr(call), node)


def run_python_block(file):
    """Runs in the child interpreter: executes the block with its expectations checked."""
    import contextlib
    code = pathlib.Path(file).read_text()
    tree = _Instrument(expected_comments(code)).visit(ast.parse(code, file))
    ast.fix_missing_locations(tree)
    seen, failures = set(), []

    def check(line, want, shown):
        if line in seen:
            return
        seen.add(line)
        got = shown.splitlines() or [""]
        ok = line_matches(want, got[0]) and (len(got) == 1 or want.rstrip().endswith("..."))
        if not ok:
            failures.append(f"line {line}: the comment says {want!r}, it printed {shown!r}")

    def doc_print(line, want, thunk):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            thunk()
        sys.stdout.write(buf.getvalue())
        check(line, want, buf.getvalue())

    def doc_value(line, want, value):
        text = ", ".join(map(repr, value)) if isinstance(value, tuple) and value else repr(value)
        if not line_matches(want, text) and line_matches(want, repr(value)):
            text = repr(value)  # a tuple written with its parentheses
        check(line, want, text)

    exec(compile(tree, file, "exec"), {"__name__": "__main__", "__doc_print__": doc_print, "__doc_value__": doc_value})
    if failures:
        sys.stderr.write("\n".join(failures) + "\n")
        return 1
    return 0


# ---- the runners -------------------------------------------------------------------------------------

class Runner:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("ATTNSEL_", "VLLM_", "TORCH_CUDNN", "PYTHONPATH"))}
        if args.cli_dir:
            self.env["PATH"] = os.path.abspath(args.cli_dir) + os.pathsep + self.env.get("PATH", "")
        if args.python_path:
            self.env["PYTHONPATH"] = os.path.abspath(args.python_path)
        self.cxx = json.loads(pathlib.Path(args.cxx_config).read_text()) if args.cxx_config else None

    def can_run(self, block):
        if block.lang == "python" and not self.args.python_path:
            return "the Python module is not built in this configuration (ATTNSEL_BUILD_PYTHON=OFF)"
        if block.lang in SHELL and not self.args.cli_dir:
            return "the CLI is not built in this configuration (ATTNSEL_BUILD_TOOLS=OFF)"
        if block.lang in CPP and not self.cxx:
            return "no C++ compiler configuration given (--cxx-config)"
        return None

    def run(self, block, n):
        name = f"block{n}"
        if block.lang == "python":
            return self.python(block, name)
        if block.lang in SHELL:
            return self.shell(block, name)
        return self.cpp(block, name)

    def proc(self, cmd, **kw):
        return subprocess.run(cmd, cwd=self.work, env=self.env, capture_output=True, text=True, timeout=300, **kw)

    def python(self, block, name):
        file = self.work / f"{name}.py"
        file.write_text("\n" * block.line + block.text)  # line numbers in errors are the doc's
        p = self.proc([sys.executable, str(pathlib.Path(__file__).resolve()), "--python-block", str(file)])
        if p.returncode:
            return f"exit status {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}"
        return None

    def shell(self, block, name):
        lines = block.text.splitlines()
        if not any(l.startswith("$ ") for l in lines):
            p = self.proc(["bash", "-euo", "pipefail", "-c", block.text])
            return None if p.returncode == 0 else f"exit status {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}"
        steps, script = [], ["exec 2>&1"]
        for line in lines:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
            elif line.strip():
                return f"a line before the first `$ ` command: {line!r}"
        sep = "@@doc-test-step@@"
        for cmd, _ in steps:
            script += [cmd, f"__rc=$?; echo {sep}; (exit $__rc)"]
        p = self.proc(["bash", "-c", "\n".join(script) + "\n"])
        outputs = p.stdout.split(sep + "\n")
        if len(outputs) != len(steps) + 1:
            return f"the session stopped early (status {p.returncode}):\n{p.stdout[-3000:]}"
        for (cmd, want), got in zip(steps, outputs):
            if not want or block.unchecked:
                continue
            if not lines_match(want, got.splitlines()):
                return f"$ {cmd}\n" + diff(want, got.splitlines())
        return None

    def cpp(self, block, name):
        c = self.cxx
        src = self.work / f"{name}.cpp"
        exe = self.work / name
        flags = [c["compiler"], "-std=c++17", "-w"] + ["-I" + d for d in c["includes"] if d] \
            + ["-D" + d for d in c["defines"] if d]
        if re.search(r"\bint\s+main\s*\(", block.text):
            if block.given:
                return "a `given:` marker on a block with main"
            src.write_text(block.text)
            p = self.proc(flags + [str(src), "-o", str(exe)] + [l for l in c["libraries"] if l] + ["-pthread"])
            if p.returncode:
                return "compile failed:\n" + p.stderr[-4000:]
            p = self.proc([str(exe)])
            if p.returncode:
                return f"exit status {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}"
            printed = p.stdout.splitlines()
            k = 0
            for m in re.finditer(r"(?:print|printf|cout)\b.*//\s*(.+)$", block.text, re.M):
                want = m.group(1)
                while k < len(printed) and not line_matches(want, printed[k]):
                    k += 1
                if k == len(printed):
                    return f"no printed line matches the comment {want!r} (in order); printed:\n" + p.stdout
                k += 1
            return None
        head = [l for l in block.text.splitlines() if l.startswith("#include")]
        body = [l for l in block.text.splitlines() if not l.startswith("#include")]
        src.write_text("\n".join(head) + f"\n[[maybe_unused]] static void doc_fragment({block.given or ''}) {{\n"
                       + "\n".join(body) + "\n}\n")
        p = self.proc(flags + ["-fsyntax-only", str(src)])
        return None if p.returncode == 0 else "compile failed:\n" + p.stderr[-4000:]


def prepare_work(source, work):
    """A working directory that looks like the source tree, plus the fixture files of tests/data/doc_examples."""
    for entry in source.iterdir():
        if entry.name.startswith((".git", "build")):
            continue
        (work / entry.name).symlink_to(entry)
    fixtures = source / "tests" / "data" / "doc_examples"
    if fixtures.is_dir():
        for f in fixtures.iterdir():
            target = work / f.name
            if target.is_symlink() or target.exists():  # never write through a link into the source tree
                target.unlink()
            shutil.copy(f, target)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source")
    ap.add_argument("--cli-dir")
    ap.add_argument("--python-path")
    ap.add_argument("--cxx-config")
    ap.add_argument("--work")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--python-block")
    # CMake passes an empty argument where a generator expression is false (no Python module built).
    args = ap.parse_args([a for a in sys.argv[1:] if a])
    if args.python_block:
        return run_python_block(args.python_block)
    source = pathlib.Path(args.source).resolve()
    docs = [source / "README.md"] + sorted((source / "docs").rglob("*.md"))
    blocks = [b for d in docs for b in parse(d, str(d.relative_to(source))) if args.only in f"{b.path}:{b.line}"]
    if args.list:
        for b in blocks:
            print(b.where, b.lang, f"skip {b.skip[0]}: {b.skip[1]}" if b.skip else "")
        return 0
    work = pathlib.Path(tempfile.mkdtemp(prefix="doc_examples.", dir=args.work))
    prepare_work(source, work)
    runner = Runner(args, work)
    ran, skipped, text, failed = {}, [], 0, []
    for n, b in enumerate(blocks):
        if b.lang == "text" and not b.skip:
            text += 1
            continue
        reason = f"{b.skip[0]}: {b.skip[1]}" if b.skip else runner.can_run(b)
        if reason:
            skipped.append((b, reason))
            print(f"SKIP {b.where} ({b.lang}): {reason}")
            continue
        lang = "shell" if b.lang in SHELL else "c++" if b.lang in CPP else b.lang
        ran[lang] = ran.get(lang, 0) + 1
        error = runner.run(b, n)
        if error:
            failed.append(b)
            print(f"FAIL {b.where} ({b.lang}): {error}")
        else:
            print(f"ok   {b.where} ({b.lang})" + (f" [output not compared: {b.unchecked}]" if b.unchecked else ""))
    shutil.rmtree(work, ignore_errors=True)
    total = sum(ran.values())
    kinds = {}
    for b, _ in skipped:
        k = b.skip[0] if b.skip else "not built"
        kinds[k] = kinds.get(k, 0) + 1
    def counts(d):
        return " (" + ", ".join(f"{v} {k}" for k, v in sorted(d.items())) + ")" if d else ""
    print(f"doc examples: ran {total}{counts(ran)}, {len(failed)} failed, skipped {len(skipped)}{counts(kinds)}, "
          f"{text} text blocks not code")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
