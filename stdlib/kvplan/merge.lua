-- stdlib/kvplan/merge.lua: `kvplan merge -o FILE PART...`: join the outputs of
-- `kvplan --shard K/N` runs into the unsharded CSV: the header once (every
-- part must have the same header), then each part's rows in the order given.
-- Stdlib layer. The joined file goes through the atomic writer (a unique
-- temporary beside FILE, every write checked, renamed into place at the
-- end), so a failed or interrupted merge leaves FILE as it was. Parts in
-- JSON Lines (`--format json`, or *.jsonl) have no header: their lines are
-- joined as they are, every part in JSON Lines or none.

local csv = require "kvplan.csv"
local util = require "kvplan.util"
local options = require "kvplan.options"

local M = {}

local function shown(s)
  return util.escape((s:gsub("\r?\n$", "")))
end

--- The longest line of a part merge takes, in bytes (16 MiB): past it a
--- part is no report (/dev/zero grew the output without end).
M.max_line = 1 << 24

local function too_long(p, lineno)
  util.raise("%s:%d: a line longer than %d bytes (merge reads lines of at most 16 MiB)", p,
             lineno, M.max_line)
end

--- Join the files listed in args (the CLI's argument table) into -o FILE.
function M.run(args)
  local parts = args or {}
  local cli = package.loaded["kvplan.cli"] or {}
  local out = cli.output
  -- a key=value word was left out of the parts without a word (merge takes none)
  local keys = {}
  for k, v in pairs(parts) do
    if math.type(k) ~= "integer" or k < 1 or k > #parts then
      keys[#keys + 1] = "'" .. util.escape(util.shown(k) .. "=" .. util.shown(v), 80) .. "'"
    end
  end
  if #keys > 0 then
    table.sort(keys)
    options.bad("kvplan merge takes parts, no key=value: got %s", table.concat(keys, ", "))
  end
  if out == nil or #parts == 0 then util.raise("merge needs -o FILE and at least one part") end
  -- a part named twice: its rows joined twice without a word
  local named = {}
  for i, p in ipairs(parts) do
    local key = tostring(p):gsub("^%./+", ""):gsub("/+", "/")
    if named[key] then
      options.bad("kvplan merge: part '%s' is named twice (parts %d and %d): each part once",
                  util.escape(util.shown(p), 200), named[key], i)
    end
    named[key] = i
  end
  local w <close> = csv.atomic(out)
  local header, json
  for _, p in ipairs(parts) do
    local f <close>, ferr = util.open_input(p)
    if not f then util.raise("%s", ferr) end
    local function read()
      local block, rerr = f:read(1 << 16)
      if block == nil and rerr then util.raise("cannot read '%s': %s", p, rerr) end
      return block
    end
    -- the header: the first line, read in blocks up to the bound
    local head, size, rest = {}, 0, nil
    while rest == nil do
      local block = read()
      if block == nil then break end
      local nl = block:find("\n", 1, true)
      if nl then block, rest = block:sub(1, nl), block:sub(nl + 1) end
      head[#head + 1], size = block, size + #block
      if size - (nl and 1 or 0) > M.max_line then too_long(p, 1) end
    end
    local h = table.concat(head)
    if h == "" then util.raise("'%s' is empty: every part starts with the CSV header", p) end
    -- a UTF-8 byte order mark (a part saved by a spreadsheet) is no header
    -- text: "has another header than" showed it invisibly
    local line = h:gsub("\r?\n$", ""):gsub("^\239\187\191", "")
    local is_json = line:sub(1, 1) == "{"
    if json == nil then json = is_json end
    if is_json ~= json then
      util.raise("'%s' is %s but '%s' is %s: merge parts of one format", p,
                 is_json and "JSON Lines" or "CSV", parts[1], json and "JSON Lines" or "CSV")
    end
    if json then
      w:write(line, "\n")
    elseif header == nil then
      header = line
      w:write(line, "\n")
    elseif line ~= header then
      util.raise("'%s' has another header than '%s': %s", p, parts[1], shown(h))
    end
    -- the rows, streamed; run: the bytes of the line not yet ended, lines:
    -- the lines ended; a line end after the last one when the part lacks it
    local last, run, lines, block = "\n", 0, 1, rest
    if block == "" then block = read() end
    while block ~= nil do
      w:write(block)
      local nl = block:find("\n[^\n]*$")
      if nl then
        run = #block - nl
        lines = lines + select(2, block:gsub("\n", ""))
      else
        run = run + #block
      end
      if run > M.max_line then too_long(p, lines + 1) end
      last = block:sub(-1)
      block = read()
    end
    if last ~= "\n" then w:write("\n") end
  end
  w:commit()
end

return M
