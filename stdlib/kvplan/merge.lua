-- stdlib/kvplan/merge.lua: `kvplan merge -o FILE PART...`: join the outputs of
-- `kvplan --shard K/N` runs into the unsharded CSV: the header once (every
-- part must have the same header), then each part's rows in the order given.
-- Stdlib layer. The joined file is written to a temporary and renamed into
-- place, so a failed merge leaves no file.

local util = require "kvplan.util"

local M = {}

--- Join the files listed in args (the CLI's argument table) into -o FILE.
function M.run(args)
  local parts = args or {}
  local cli = package.loaded["kvplan.cli"] or {}
  local out = cli.output
  if out == nil or #parts == 0 then util.raise("merge needs -o FILE and at least one part") end
  local tmp = out .. ".tmp.merge"
  local w, err = io.open(tmp, "wb")
  if not w then util.raise("cannot create '%s': %s", tmp, err) end
  local header
  for _, p in ipairs(parts) do
    local f, ferr = io.open(p, "rb")
    if not f then
      w:close()
      os.remove(tmp)
      util.raise("%s", ferr)
    end
    local h = f:read("L")
    if h == nil then
      f:close(); w:close(); os.remove(tmp)
      util.raise("'%s' is empty: every part starts with the CSV header", p)
    end
    if header == nil then
      header = h
      w:write(h)
    elseif h ~= header then
      f:close(); w:close(); os.remove(tmp)
      util.raise("'%s' has another header than '%s': %s", p, parts[1], (h:gsub("\n$", "")))
    end
    while true do
      local block = f:read(1 << 16)
      if block == nil then break end
      w:write(block)
    end
    f:close()
  end
  local ok, werr = w:close()
  if not ok then os.remove(tmp); util.raise("cannot write '%s': %s", out, werr) end
  local rok, rerr = os.rename(tmp, out)
  if not rok then os.remove(tmp); util.raise("cannot rename '%s' to '%s': %s", tmp, out, rerr) end
end

return M
