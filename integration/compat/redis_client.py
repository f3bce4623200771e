"""ticketd's Redis front door through redis-py, unchanged (integration/redis_clients_test.go).

Usage: redis_client.py HOST PORT KEY N; prints one line per check, then "ok".
"""
import sys

import redis

host, port, key, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for proto in (2, 3):
    try:
        r = redis.Redis(host=host, port=port, protocol=proto, decode_responses=True)
    except TypeError:  # redis-py before 5 has no protocol argument: RESP2 only
        if proto == 3:
            continue
        r = redis.Redis(host=host, port=port, decode_responses=True)
    assert r.ping() is True
    got = [r.incr(key) for _ in range(n)]
    assert got == sorted(got) and len(set(got)) == n, got
    print("incr", proto, got[0], got[-1])
    p = r.pipeline(transaction=False)
    for _ in range(10):
        p.incr(key)
    piped = p.execute()
    assert piped == list(range(piped[0], piped[0] + 10)), piped
    assert r.incrby(key, 5) == piped[-1] + 5
    name = "py:%d" % proto
    assert r.set(name, "v", ex=100) is True
    assert 99 <= r.ttl(name) <= 100
    assert r.get(name) == "v"
    assert r.set(name, "w", nx=True) is None
    assert r.getset(name, "x") == "v"
    assert r.mget(name, "py:none") == ["x", None]
    assert r.exists(name) == 1 and r.delete(name) == 1 and r.get(name) is None
    r.set(name, "text")
    try:
        r.incr(name)
        raise SystemExit("INCR of a string did not fail")
    except redis.ResponseError as e:
        assert str(e) == "value is not an integer or out of range", str(e)
    try:
        r.lpush("l", "x")
        raise SystemExit("LPUSH did not fail")
    except redis.ResponseError as e:
        assert "'LPUSH' is not supported" in str(e), str(e)
    r.delete(name)
    print("commands", proto)
print("ok")
