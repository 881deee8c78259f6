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

local M = {}

local function shown(s)
  return util.escape((s:gsub("\r?\n$", "")))
end

--- Join the files listed in args (the CLI's argument table) into -o FILE.
function M.run(args)
  local parts = args or {}
  local cli = package.loaded["kvplan.cli"] or {}
  local out = cli.output
  if out == nil or #parts == 0 then util.raise("merge needs -o FILE and at least one part") end
  local w <close> = csv.atomic(out)
  local header, json
  for _, p in ipairs(parts) do
    local f <close>, ferr = io.open(p, "rb")
    if not f then util.raise("%s", ferr) end
    local h = f:read("L")
    if h == nil then util.raise("'%s' is empty: every part starts with the CSV header", p) end
    local line = h:gsub("\r?\n$", "")
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
    -- the rows, with a line end after the last one when the part lacks it
    local last = "\n"
    while true do
      local block, rerr = f:read(1 << 16)
      if block == nil then
        if rerr then util.raise("cannot read '%s': %s", p, rerr) end
        break
      end
      w:write(block)
      last = block:sub(-1)
    end
    if last ~= "\n" then w:write("\n") end
  end
  w:commit()
end

return M
