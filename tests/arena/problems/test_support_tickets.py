"""A customer's own message against a support agent's ticket of it: the ticket's field labels ("Req:",
"Svc:", "Qty:", "TKT:", "Cust pref:") are its frame, no names, in a product request and in a riddle's
clue; "Voucher: free shipping" is the voucher's kind, not a service asked; a riddle's country in
Tagalog ("mula sa Espanya") is the country in English, and Tagalog's and Cebuano's "our" ("natin",
"nato") is the shop's own country, as "our" is. A live-selling claim ("mine po yung ... !!") asks however
excited it is, and "Cashback 10%." said alone is the voucher's, no name. Another value in the ticket is
still another ask.
Hand-written for the seventeenth session (pool 75, customer messages against agents' tickets, showed
the class; none of these sentences is from a pool)."""

from __future__ import annotations

import pytest

from arena.problems.asks import split_problem
from arena.problems.official import parse_row
from tests.support.veto_cases import read_query, veto

ONE_ASK = [
    (
        "product",
        "hi po, need ko ng electric kettle na 1.7L, stainless, yung Imarflex sana. up to 1,200 lang po, COD",
        "Req: Imarflex electric kettle 1.7L, stainless; Budget: max ₱1,200; Svc: COD",
    ),
    (
        "product",
        "TKT: Uniqlo airism tee, navy, size M | Qty: 2 | Budget < P800 | Svc: free shipping",
        "Customer wants two navy Uniqlo AIRism tees in medium, under ₱800 total, with free shipping.",
    ),
    (
        "voucher",
        "May free shipping voucher ako, min spend ₱299. Bibili ako ng 2kg na detergent powder, budget ko ₱450.",
        "Req: detergent powder 2 kg; Budget: ₱450; Voucher: free shipping, min spend ₱299",
    ),
    (
        "knowledge",
        "Req: tote bag printed with the year the Philippines became independent from Spain; Svc: COD",
        "pa-print po ng tote bag, yung taon kung kailan lumaya ang Pilipinas mula sa Espanya. cod po",
    ),
    (
        "knowledge",
        "Req: scented candle, scent = national flower of the Philippines; Budget: ₱300",
        "Ano nga ba ang pambansang bulaklak natin? Yun ang gusto kong amoy ng kandila, ₱300 lang.",
    ),
]

ONE_ASK += [
    (
        "product",
        "mine po yung denim jacket na light wash, size S!! hm po? kung below 600 kukunin ko na",
        "Seller note: light wash denim jacket, size S, reserved for buyer; buyer's limit below ₱600",
    ),
    (
        "voucher",
        "Req: electric toothbrush; Budget: ₱2,500; Voucher: 5% cashback, max ₱100",
        "Electric toothbrush po. Budget 2.5k. May voucher ako. Cashback 5%. Hanggang 100 lang.",
    ),
]

TWO_ASKS = [
    (
        "product",
        "hi po, need ko ng electric kettle na 1.7L, stainless, yung Imarflex sana. up to 1,200 lang po, COD",
        "Req: Imarflex electric kettle 1.0L, stainless; Budget: max ₱1,200; Svc: COD",
    ),
    (
        "product",
        "TKT: Uniqlo airism tee, navy, size M | Qty: 2 | Budget < P800 | Svc: free shipping",
        "TKT: Uniqlo airism tee, navy, size M | Qty: 2 | Budget < P800 | Svc: COD",
    ),
    (
        "knowledge",
        "Req: tote bag printed with the year the Philippines became independent from Spain; Svc: COD",
        "Req: tote bag printed with the year the United States became independent from Britain; Svc: COD",
    ),
    (
        "knowledge",
        "Req: scented candle, scent = national flower of the Philippines; Budget: ₱300",
        "Ano nga ba ang pambansang bulaklak ng Japan? Yun ang gusto kong amoy ng kandila, ₱300 lang.",
    ),
]


TWO_ASKS += [
    (
        "product",
        "mine po yung denim jacket na light wash, size S!! hm po? kung below 600 kukunin ko na",
        "Seller note: light wash denim jacket, size M, reserved for buyer; buyer's limit below ₱600",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_message_and_its_ticket_are_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_value_in_the_ticket_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("Req: Nike running shoes, white, US 9; Budget: <₱4,500; Svc: COD", "product"),
        ("TKT: Asahi stand fan 16in | Qty: 1 | Cust pref: white", "product"),
        ("Req: mug printed with the year PH declared independence; Svc: COD", "knowledge"),
    ],
)
def test_a_tickets_labels_are_no_names(query, intent):
    read = read_query(query, intent)
    labels = {"req", "svc", "tkt", "qty", "cust", "pref"}
    assert not labels & set(read.whole.names)
    if read.clue is not None:
        assert not labels & {w for run in read.clue.names for w in run}


def test_a_voucher_fields_value_is_the_voucher():
    problem = parse_row(
        {
            "id": "t",
            "intent": "voucher",
            "query": "Req: rice 5 kg; Budget: ₱600; Voucher: free shipping, min spend ₱299",
        },
        query_only=True,
    )
    _, request, voucher = split_problem(problem)
    assert "free shipping" in voucher
    assert "free shipping" not in request
    assert read_query(problem.query, "voucher").whole.services == ()
