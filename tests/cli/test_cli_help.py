"""`tui-lab --help` shows the app's options and the commands; a stray word is refused in one line."""

import subprocess
import sys

import pytest

from tui_lab.cli import COMMANDS, main

APP_OPTIONS = ("--preset", "--checkpoint", "--from-hf", "--device", "--train")


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_the_app_options_and_every_command(capsys, flag):
    assert main([flag]) == 0
    out = capsys.readouterr().out
    for option in APP_OPTIONS:
        assert option in out, option
    for command, (_, help_text) in COMMANDS.items():
        assert command in out and help_text in out, command


@pytest.mark.parametrize("word, near", [("preset", "presets"), ("trian", "train"), ("gen", "generate"),
                                        ("exprot", "export"), ("infos", "info")])
def test_a_near_miss_names_the_command_in_one_line_and_exits_2(capsys, word, near):
    assert main([word]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"tui-lab: error: unknown command '{word}'; did you mean '{near}'?\n"
    assert captured.out == ""  # the app did not start


def test_a_word_that_is_no_near_miss_lists_the_commands(capsys):
    assert main(["frobnicate", "--preset", "gpt2-toy"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "unknown command 'frobnicate'" in err and "did you mean" not in err
    assert all(command in err for command in COMMANDS) and "--help" in err


def test_a_bad_app_flag_is_one_line_not_a_usage_block(capsys):
    assert main(["--bogus"]) == 2
    err = capsys.readouterr().err
    assert err == "tui-lab: error: unrecognized arguments: --bogus\n"


def test_a_command_keeps_its_own_help_and_prog(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["info", "--help"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("usage: tui-lab info ")


def test_the_installed_entry_point_behaves_the_same():
    """The console script calls main() with sys.argv: the same help and the same one-line refusal."""
    code = "import sys; from tui_lab.cli import main; sys.exit(main())"
    help_ = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and all(option in help_.stdout for option in APP_OPTIONS)
    typo = subprocess.run([sys.executable, "-c", code, "preset"], capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2 and typo.stderr.strip().splitlines() == [
        "tui-lab: error: unknown command 'preset'; did you mean 'presets'?"]


def test_help_names_every_hugging_face_family_the_lab_opens(capsys):
    from tui_lab.hf.families import FAMILIES

    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    labels = [family.label for family in FAMILIES.values()]
    assert len(labels) == 9 and f"Hugging Face models of 9 families: {', '.join(labels[:-1])} and {labels[-1]}." in out
