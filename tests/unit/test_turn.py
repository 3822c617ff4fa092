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
    """A thread that does not hold the turn neither waits nor hands the turn on, even
    while others hold it and wait for it."""
    turn = Turn()
    turn.breathe(wait=5)
    assert turn._owner is None and not turn._lock.locked()
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with turn.held():
            holding.set()
            release.wait(10)

    def waiter() -> None:
        with turn.held():
            pass

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    threads[0].start()
    holding.wait(5)
    owner = turn._owner
    threads[1].start()
    while not turn._waiting:
        time.sleep(0.001)
    started = time.monotonic()
    turn.breathe(wait=5)
    assert time.monotonic() - started < 2.5  # returned at once, not after its wait
    assert turn._owner == owner and turn._waiting == 1  # the holder keeps it; the waiter waits
    release.set()
    for t in threads:
        t.join(5)


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
