"""The README's "A cluster in one process" example runs as printed."""

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_cluster_example_in_the_readme_runs(capsys):
    text = README.read_text()
    section = text[text.index("## A cluster in one process"):text.index("## Controlling")]
    code = section[section.index("```python\n") + 10:]
    code = code[:code.index("```")]
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.count("'running': True") == 3  # every broker back after the bounce
    assert "'isr': [1, 2, 3]" in printed
