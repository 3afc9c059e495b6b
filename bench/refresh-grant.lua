-- wrk script: POST the same refresh grant to the token endpoint and count answers that are not HTTP 200.
-- The url-encoded form is read from the file named by $B2C_BENCH_FORM (so the refresh token is never on a command line).
local path = os.getenv("B2C_BENCH_FORM") or error("set B2C_BENCH_FORM to the form file")
local file = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    answered = 0
    not200 = 0
end

function response(status, headers, body)
    answered = answered + 1
    if status ~= 200 then
        not200 = not200 + 1
    end
end

function done(summary, latency, requests)
    local total, bad = 0, 0
    for _, t in ipairs(threads) do
        total = total + t:get("answered")
        bad = bad + t:get("not200")
    end
    io.write(string.format("b2c-bench answered %d not200 %d errors %d p50_us %d p99_us %d duration_us %d\n", total, bad,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
        latency:percentile(50), latency:percentile(99), summary.duration))
end
