-- tests/lua/check.lua: helpers for the Lua tests (as Lua's testes/errors.lua).
local M = {}

--- f(...) must fail with a message matching pattern (plain find unless
--- the pattern starts with '^'); returns the message.
function M.error(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching: " .. pattern)
  msg = tostring(msg)
  local plain = pattern:sub(1, 1) ~= "^"
  assert(msg:find(pattern, 1, plain), "error '" .. msg .. "' does not match '" .. pattern .. "'")
  return msg
end

--- a == b, with both in the message when not.
function M.eq(a, b, what)
  if a ~= b then
    error(string.format("%s: expected %s, got %s", what or "value", tostring(b), tostring(a)), 2)
  end
end

--- a temporary directory (removed by the caller with rmdir)
function M.tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. p))
  return p
end

function M.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

return M
