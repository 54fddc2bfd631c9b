"""free_port never hands the same port out twice in one process: a stack names its services'
ports before it starts them, so a port given out is not bound yet and "free now" is not enough."""

from __future__ import annotations

from services.common.infra.processes import free_port


def test_ports_handed_out_are_never_handed_out_again_even_while_unbound() -> None:
    # 1,000 draws from the ~22,000 ports below the ephemeral range: without the memory of what was
    # handed out, a repeat is all but certain (the birthday bound puts it above 99.99 %).
    ports = [free_port() for _ in range(1000)]
    assert len(set(ports)) == len(ports)
