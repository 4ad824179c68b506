"""Unit tests of verify's pieces that need no script run."""

import inspect

from devfix.verify import report


def test_rule_names_come_from_the_rules_registry():
    from devfix.rules import BY_CODE

    for code in report.HINTS:
        assert report.rule_name(code) == BY_CODE[code].name
    source = inspect.getsource(report)
    assert not any(f'"{rule.name}"' in source for rule in BY_CODE.values()), "a copied rule name"
    res = report._with_rule(report.Result("device-error", 1), "DEV012")
    assert (res.rule_name, res.hint) == (BY_CODE["DEV012"].name, report.HINTS["DEV012"])


def test_simulated_devices_text():
    assert report.simulated(1) == "simulated cuda:0"
    assert report.simulated(2) == "simulated cuda:0 and cuda:1"
    assert report.simulated(4) == "simulated cuda:0 to cuda:3"

