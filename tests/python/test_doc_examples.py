# SPDX-License-Identifier: Apache-2.0
# The doc-example runner (tests/doc_examples.py, ctest doc_examples) on made-up docs: it fails on drift,
# counts what it skips, and refuses blocks it cannot classify.
import os
import pathlib
import subprocess
import sys

from conftest import SOURCE_DIR

RUNNER = SOURCE_DIR / "tests" / "doc_examples.py"


def run_docs(tmp_path, readme, **files):
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "docs").mkdir()
    for name, text in files.items():
        (tmp_path / "docs" / name).write_text(text)
    args = [sys.executable, str(RUNNER), "--source", str(tmp_path), "--work", str(tmp_path), "--cli-dir", str(tmp_path)]
    if os.environ.get("PYTHONPATH"):
        args.append("--python-path=" + os.environ["PYTHONPATH"].split(os.pathsep)[0])
    return subprocess.run(args, capture_output=True, text=True)


GOOD = """
```python
import attnsel
q = attnsel.Query(head_size=64)
q.head_size, q.dtype          # 64, 'bfloat16'
print(q.head_size + 1)        # 65
```

Text between.

<!-- doc-test: continue -->
```python
print(q.head_size * 2)        # 128
```

<!-- doc-test: skip gpu: needs an NVIDIA GPU -->
```python
raise SystemExit("never run")
```

```text
not code
```
"""


def test_good_docs_pass_and_are_counted(tmp_path):
    p = run_docs(tmp_path, GOOD)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "doc examples: ran 1 (1 python), 0 failed, skipped 1 (1 gpu), 1 text blocks not code" in p.stdout
    assert "SKIP README.md:17 (python): gpu: needs an NVIDIA GPU" in p.stdout


def test_a_drifted_comment_fails_with_the_doc_line(tmp_path):
    p = run_docs(tmp_path, GOOD.replace("# 128", "# 129"))
    assert p.returncode == 1
    assert "FAIL README.md:2 (python)" in p.stdout
    assert "line 13: the comment says '129', it printed '128" in p.stdout
    (tmp_path / "b").mkdir()
    p = run_docs(tmp_path / "b", GOOD.replace("64, 'bfloat16'", "64, 'float16'"))
    assert p.returncode == 1 and "it printed \"64, 'bfloat16'\"" in p.stdout


def test_an_untagged_fence_and_an_unknown_marker_are_refused(tmp_path):
    p = run_docs(tmp_path, "```\nls\n```\n")
    assert p.returncode != 0 and "a fence without a language" in p.stdout + p.stderr
    (tmp_path / "x").mkdir()
    p = run_docs(tmp_path / "x", "<!-- doc-test: skip later: soon -->\n```sh\nls\n```\n")
    assert p.returncode != 0 and "skip KIND: REASON" in p.stdout + p.stderr


def test_a_shell_transcript_compares_output_and_status(tmp_path):
    doc = "```console\n$ echo one; echo two\none\n...\n$ false\n$ echo $?\n1\n```\n"
    assert run_docs(tmp_path, doc).returncode == 0
    (tmp_path / "y").mkdir()
    p = run_docs(tmp_path / "y", doc.replace("$ echo $?\n1", "$ echo $?\n0"))
    assert p.returncode == 1 and "expected:\n0\nprinted:\n1" in p.stdout
