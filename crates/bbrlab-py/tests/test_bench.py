"""``python -m bbrlab bench``'s arguments: refused before anything runs,
with the option and what it allows (the benchmark itself takes minutes
and is run by hand, scripts/bench-python.sh)."""

from __future__ import annotations

import pytest

from bbrlab import bench


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--run-seconds", "nan"], "--run-seconds: more than 0 and at most 60 seconds, not nan"),
        (["--run-seconds", "inf"], "--run-seconds: more than 0 and at most 60 seconds, not inf"),
        (["--run-seconds", "0"], "--run-seconds: more than 0"),
        (["--run-seconds", "-1"], "--run-seconds: more than 0"),
        (["--runs", "0"], "--runs: at least 1, not 0"),
        (["--rounds", "-2"], "--rounds: at least 1, not -2"),
        (["--repeat", "0"], "--repeat: at least 1, not 0"),
    ],
)
def test_bad_arguments_are_refused_naming_the_option(argv, says, capsys, tmp_path):
    # A --cli that exists, so only the argument under test is wrong.
    cli = tmp_path / "bbrlab"
    cli.write_text("")
    with pytest.raises(SystemExit) as e:
        bench.main(argv + ["--cli", str(cli)])
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_a_missing_cli_says_how_to_build_it(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        bench.main(["--cli", str(tmp_path / "nope")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--cli: no such file" in err and "cargo build --release -p bbrlab" in err
