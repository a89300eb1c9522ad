-- wrk -s bench/quote.lua: price a configuration on the partner API, as a partner would.
-- The key comes from the environment (bench/run.py creates one with create_api_key).
local key = os.getenv("BENCH_API_KEY")
assert(key and key ~= "", "BENCH_API_KEY is not set")

wrk.method = "POST"
wrk.body = '{"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Api-Key " .. key
