"""`Turn`: the one-thread-at-a-time rule of the servers, and a long command giving its
turn up between steps without losing its own state."""

from __future__ import annotations

import threading
import time

from amem_cli.server.worker import Turn


def test_breathe_lets_a_waiting_thread_in_and_resumes_the_holder():
    turn = Turn()
    order: list[str] = []
    state = {"cwd": "import's"}
    entered = threading.Event()

    def other() -> None:
        entered.set()
        with turn.held():
            state["cwd"] = "search's"  # process-wide state another command changes
            order.append("search")

    def resume() -> None:
        state["cwd"] = "import's"

    with turn.held(resume=resume):
        t = threading.Thread(target=other)
        t.start()
        entered.wait(5)
        while not turn._waiting:  # the search is queued behind the import
            time.sleep(0.001)
        order.append("batch 1")
        turn.breathe()
        assert state["cwd"] == "import's"  # put back when the turn came back
        order.append("batch 2")
    t.join(5)
    assert order == ["batch 1", "search", "batch 2"]


def test_breathe_with_nobody_waiting_keeps_the_turn():
    turn = Turn()
    resumed = []
    with turn.held(resume=lambda: resumed.append(1)):
        turn.breathe()
        assert turn._owner == threading.get_ident()
    assert resumed == []


def test_breathe_outside_a_turn_does_nothing():
    Turn().breathe()
