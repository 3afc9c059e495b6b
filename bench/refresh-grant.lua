-- wrk script: POST the same grant to the token endpoint and count answers that are not HTTP 200.
-- The url-encoded form is read from the file named by $B2C_BENCH_FORM (so the refresh token is never on a command line).
-- With B2C_BENCH_STATUS=wrk the script leaves the counting to wrk itself (answers >= 400, in its status errors) and
-- reports not200 as 0: no Lua runs per answer, which on a 2-core machine gave the tenant 3.5-4.8 % of its throughput
-- back (bench/README.md, "Issue 43: the load generator and the tenant's instructions"). The caller then checks the
-- outcomes another way (emulator-throughput.sh reads the tenant's own log of every token request).
local path = os.getenv("B2C_BENCH_FORM") or error("set B2C_BENCH_FORM to the form file")
local file = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"

local perAnswer = os.getenv("B2C_BENCH_STATUS") ~= "wrk"
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    answered = 0
    not200 = 0
end

-- wrk parses each answer's headers and body for Lua only when the script has a `response` function.
if perAnswer then
    function response(status, headers, body)
        answered = answered + 1
        if status ~= 200 then
            not200 = not200 + 1
        end
    end
end

function done(summary, latency, requests)
    local total, bad = 0, 0
    if perAnswer then
        for _, t in ipairs(threads) do
            total = total + t:get("answered")
            bad = bad + t:get("not200")
        end
    else
        total = summary.requests
    end
    io.write(string.format("b2c-bench answered %d not200 %d errors %d p50_us %d p99_us %d duration_us %d\n", total, bad,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
        latency:percentile(50), latency:percentile(99), summary.duration))
end
