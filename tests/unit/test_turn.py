"""`Turn`: the one-thread-at-a-time rule of the servers, and a long command giving its
turn up between steps."""

from __future__ import annotations

import threading
import time

from amem_cli.server.worker import Turn


def test_breathe_lets_a_waiting_thread_in_and_takes_the_turn_back():
    turn = Turn()
    order: list[str] = []
    entered = threading.Event()

    def other() -> None:
        entered.set()
        with turn.held():
            order.append("search")

    with turn.held():
        t = threading.Thread(target=other)
        t.start()
        entered.wait(5)
        while not turn._waiting:  # the search is queued behind the import
            time.sleep(0.001)
        order.append("batch 1")
        turn.breathe()
        assert turn._owner == threading.get_ident()  # the import has its turn back
        order.append("batch 2")
    t.join(5)
    assert order == ["batch 1", "search", "batch 2"]


def test_breathe_with_nobody_waiting_keeps_the_turn():
    turn = Turn()
    with turn.held():
        turn.breathe()
        assert turn._owner == threading.get_ident()


def test_breathe_outside_a_turn_does_nothing():
    Turn().breathe()


def test_breathe_sees_a_thread_that_takes_the_turn_and_gives_it_back_at_once():
    """The queue worker looks in, finds nothing to do and leaves within microseconds: the
    holder gets its turn back then, not at the end of the wait (an import lost a second
    at each batch so)."""
    turn = Turn()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            with turn.held():
                pass
            time.sleep(0.01)

    t = threading.Thread(target=worker)
    with turn.held():
        t.start()
        waits = []
        for _ in range(5):
            while not turn._waiting:
                time.sleep(0.001)
            started = time.monotonic()
            turn.breathe(wait=30)
            waits.append(time.monotonic() - started)
    stop.set()
    t.join(5)
    assert max(waits) < 10, waits  # the bug waited the whole 30 s
