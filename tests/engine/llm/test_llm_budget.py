"""Dollar and token budgets: never a sixth call at $0.50 and $0.10 a call, sequential or concurrent."""

from __future__ import annotations

import asyncio

import pytest
from llm_helpers import MOCK_TOKENS, MODEL, TEN_CENTS, client, messages, new_archive, rows

from archive.store import Archive
from engine.llm import Budget, BudgetExceeded


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("max_cost, calls", [(0.50, 5), (0.30, 3), (0.45, 5), (0.80, 8)])  # 8 x 0.1 sums to 0.7999...99
def test_dollar_budget_sequential(tmp_path, max_cost, calls):
    archive = new_archive(tmp_path)
    llm = client(archive, max_cost_usd=max_cost)

    async def scenario():
        for i in range(calls):
            await llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key=str(i), **TEN_CENTS)
        for i in range(calls, calls + 3):
            with pytest.raises(BudgetExceeded, match="budget reached"):
                await llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key=str(i), **TEN_CENTS)

    run(scenario())
    assert len(rows(archive)) == calls
    assert llm.spent().cost_usd == pytest.approx(0.10 * calls)


def gather_ten(llm, in_flight: list[int], **params):
    async def scenario():
        return await asyncio.gather(
            *[
                llm.complete(
                    messages(), model=MODEL, purpose="mutate", node_id=i, key=f"child {i}", mock_delay=0.02, **params
                )
                for i in range(10)
            ],
            return_exceptions=True,
        )

    return run(scenario())


def counting_mock(llm_ref: list, in_flight: list[int]):
    def mock(model, msgs, attempt):
        in_flight.append(llm_ref[0].budget.in_flight)
        return "child code"

    return mock


def test_dollar_budget_with_ten_concurrent_calls(tmp_path):
    archive = new_archive(tmp_path)
    ref: list = []
    in_flight: list[int] = []
    llm = client(archive, mock=counting_mock(ref, in_flight), max_cost_usd=0.50)
    ref.append(llm)
    results = gather_ten(llm, in_flight, **TEN_CENTS)
    answers = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BudgetExceeded)]
    assert len(answers) == 5 and len(refused) == 5
    assert len(rows(archive)) == 5 and llm.spent().cost_usd == pytest.approx(0.50)
    assert in_flight[0] == 1  # the first call of a model runs alone: it teaches the estimate
    assert max(in_flight) > 1  # then the calls did overlap


def test_token_budget_with_ten_concurrent_calls_and_sequentially(tmp_path):
    archive = new_archive(tmp_path)
    ref: list = []
    in_flight: list[int] = []
    llm = client(archive, mock=counting_mock(ref, in_flight), max_tokens_total=5 * MOCK_TOKENS)
    ref.append(llm)
    results = gather_ten(llm, in_flight)
    assert sum(not isinstance(r, BaseException) for r in results) == 5
    assert all(isinstance(r, BudgetExceeded) for r in results if isinstance(r, BaseException))
    assert "tokens" in str(next(r for r in results if isinstance(r, BaseException)))
    assert len(rows(archive)) == 5 and llm.spent().tokens == 5 * MOCK_TOKENS and max(in_flight) > 1

    archive2 = new_archive(tmp_path, "b.duckdb")
    sequential = client(archive2, max_tokens_total=4 * MOCK_TOKENS + 1)  # 121 tokens: the 5th call crosses it

    async def one_by_one():
        made = 0
        for i in range(10):
            try:
                await sequential.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key=str(i))
            except BudgetExceeded:
                return made
            made += 1
        return made

    assert run(one_by_one()) == 5


def test_failed_calls_cost_nothing_and_free_their_reservation(tmp_path):
    archive = new_archive(tmp_path)

    def mock(model, msgs, attempt):
        return "litellm.InternalServerError" if "fail" in msgs[-1]["content"] else "ok"

    llm = client(archive, mock=mock, max_cost_usd=0.30, max_retries=0)

    async def scenario():
        await llm.complete(messages("good"), model=MODEL, purpose="mutate", node_id=None, key="0", **TEN_CENTS)
        results = await asyncio.gather(
            *[
                llm.complete(
                    messages("fail" if i % 2 else "good"),
                    model=MODEL,
                    purpose="mutate",
                    node_id=None,
                    key=str(i),
                    mock_delay=0.01,
                    **TEN_CENTS,
                )
                for i in range(1, 9)
            ],
            return_exceptions=True,
        )
        return results

    results = run(scenario())
    paid = archive.query("SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0]
    failed = archive.query("SELECT count(*) FROM llm_calls WHERE error IS NOT NULL")[0][0]
    assert paid == 3 and failed >= 1  # failures did not use up the $0.30
    assert any(isinstance(r, BudgetExceeded) for r in results)
    assert llm.spent().cost_usd == pytest.approx(0.30)


def test_budget_admission_waits_for_calls_in_flight():
    async def scenario():
        budget = Budget(max_cost_usd=0.5, spent_usd=0.3, estimates={MODEL: (0.1, 30)})
        first = await budget.admit(MODEL)  # 0.3 + nothing in flight < 0.5
        second = await budget.admit(MODEL)  # 0.3 + 0.1 < 0.5
        third = asyncio.ensure_future(budget.admit(MODEL))  # 0.3 + 0.2 = 0.5: waits
        await asyncio.sleep(0.01)
        assert not third.done()
        budget.release(first)  # failed: no charge, room again
        reservation = await asyncio.wait_for(third, 1)
        budget.charge(0.1, 30)
        budget.release(second, (0.1, 30))  # spent 0.4, one in flight at 0.1
        fourth = asyncio.ensure_future(budget.admit(MODEL))
        await asyncio.sleep(0.01)
        assert not fourth.done()
        budget.charge(0.1, 30)
        budget.release(reservation, (0.1, 30))  # spent 0.5: the waiter is refused
        with pytest.raises(BudgetExceeded):
            await asyncio.wait_for(fourth, 1)

    run(scenario())


def test_unknown_model_runs_alone_until_it_has_an_estimate():
    async def scenario():
        budget = Budget(max_tokens_total=1000)
        first = await budget.admit("m")
        assert first.cost_usd is None
        second = asyncio.ensure_future(budget.admit("m"))
        await asyncio.sleep(0.01)
        assert not second.done()
        budget.charge(None, 30)
        budget.release(first, (None, 30))
        assert (await asyncio.wait_for(second, 1)).tokens == 30

    run(scenario())


def test_resumed_budget_counts_what_was_spent_before(tmp_path):
    archive = new_archive(tmp_path)
    run(client(archive).complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="x", **TEN_CENTS))
    archive.close()
    archive = Archive.open(tmp_path / "a.duckdb")
    budget = Budget.from_archive(archive, 0.5, None)
    assert budget.spent_usd == pytest.approx(0.10) and budget.spent_tokens == MOCK_TOKENS
    assert budget._estimates[MODEL] == (pytest.approx(0.10), MOCK_TOKENS)
