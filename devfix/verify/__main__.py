"""``python -m devfix.verify SCRIPT [ARGS]``: the verifier without the devfix CLI."""

from devfix.verify.command import verify_command

if __name__ == "__main__":
    verify_command(prog_name="devfix verify")
