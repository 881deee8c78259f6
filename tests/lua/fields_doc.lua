-- tests/lua/fields_doc.lua: the docs' lists of deployment fields, generated
-- from the registry (stdlib/kvplan/fields.lua): the option table of
-- docs/fields.md, the one-word fields and the engines' option names of the
-- manual page (docs/kvplan.1, ARGUMENTS). tests/lua/fields_test.lua checks both;
-- `build/kvplan tests/lua/fields_doc.lua` (from the source tree) rewrites them.
local fields = require "kvplan.fields"

local M = {}

M.engines = {{"vllm", "vLLM"}, {"sglang", "SGLang"}, {"trtllm", "TensorRT-LLM"}}

--- The engine's spellings of field f (a list; its own name when the field
--- is spelled as the engine spells it).
function M.spellings(f, e)
  local a = f[e]
  if a == true then return {f.name} end
  if type(a) == "string" then return {a} end
  return a or {}
end

local function cell(s) return (tostring(s):gsub("|", "\\|")) end

local function names(f, e)
  local s = {}
  for i, n in ipairs(M.spellings(f, e)) do s[i] = "`" .. n .. "`" end
  return table.concat(s, ", ")
end

M.header = "| field | type | unit | default | check | meaning | vLLM | SGLang | TensorRT-LLM |"
M.rule = "|---|---|---|---|---|---|---|---|---|"

--- The table row of field f.
function M.row(f)
  local ty = f.type == "enum" and ("enum: " .. table.concat(f.values, ", ")) or f.type
  local chk = f.type == "fraction" and "(0, 1]" or f.min ~= nil and (">= " .. f.min) or ""
  return string.format("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |", f.name, cell(ty),
                       cell(f.unit or ""), cell(f.default), cell(chk), cell(f.meaning),
                       names(f, "vllm"), names(f, "sglang"), names(f, "trtllm"))
end

--- The manual page's lines between the markers: per engine, a .TP entry
--- listing "alias (field)" for each name that is not kvplan's own.
M.man_begin = ".\\\" engine option names: generated from stdlib/kvplan/fields.lua (tests/lua/fields_doc.lua)"
M.man_end = ".\\\" end of the generated names"
function M.man_lines()
  local out = {}
  for _, e in ipairs(M.engines) do
    local items = {}
    for _, f in ipairs(fields.list) do
      if f[e[1]] ~= true then
        for _, n in ipairs(M.spellings(f, e[1])) do items[#items + 1] = n .. " (" .. f.name .. ")" end
      end
    end
    out[#out + 1] = ".TP"
    out[#out + 1] = ".B " .. e[2]:gsub("%-", "\\-")
    out[#out + 1] = table.concat(items, ", ")
  end
  return out
end

--- The manual page's list of the one-word deployment fields (ARGUMENTS),
--- every one of which the deployment commands take (their own words model,
--- gpu, tp, pp, kv, weights and what kv.options.deployment_fields adds,
--- options.flat_field), between its own markers.
M.man_fields_begin = ".\\\" deployment fields: generated from stdlib/kvplan/fields.lua (tests/lua/fields_doc.lua)"
M.man_fields_end = ".\\\" end of the generated fields"
function M.man_fields_lines()
  local flat = require("kvplan.options").flat_field
  -- the words every command names itself (options.lua own_words) are fields too
  local own = {model = true, gpu = true, tp = true, pp = true, kv = true, weights = true}
  local names = {}
  for _, f in ipairs(fields.list) do
    if flat(f) or f.every_command or own[f.name] then names[#names + 1] = f.name end
  end
  return {".IP", table.concat(names, ", ")}
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

--- Rewrite the table of docs/fields.md (the lines from its header to the
--- first line that is not a row) and the manual page's generated lines.
function M.write()
  local doc = read("docs/fields.md")
  local lines = {M.header, M.rule}
  for _, f in ipairs(fields.list) do lines[#lines + 1] = M.row(f) end
  local a = doc:find(M.header, 1, true)
  assert(a, "docs/fields.md has no table header")
  local b = a
  while true do
    local nl = doc:find("\n", b, true)
    if nl == nil then b = #doc + 1 break end
    if doc:sub(nl + 1, nl + 1) ~= "|" then b = nl + 1 break end
    b = nl + 1
  end
  write("docs/fields.md", doc:sub(1, a - 1) .. table.concat(lines, "\n") .. "\n" .. doc:sub(b))
  local man = read("docs/kvplan.1")
  local m1 = assert(man:find(M.man_begin, 1, true), "docs/kvplan.1 has no generated block")
  local m2 = assert(man:find(M.man_end, m1, true), "docs/kvplan.1: the generated block has no end")
  man = man:sub(1, m1 - 1) .. M.man_begin .. "\n" .. table.concat(M.man_lines(), "\n") .. "\n" .. man:sub(m2)
  local f1 = assert(man:find(M.man_fields_begin, 1, true), "docs/kvplan.1 has no generated list of fields")
  local f2 = assert(man:find(M.man_fields_end, f1, true), "docs/kvplan.1: the generated fields have no end")
  write("docs/kvplan.1", man:sub(1, f1 - 1) .. M.man_fields_begin .. "\n"
        .. table.concat(M.man_fields_lines(), "\n") .. "\n" .. man:sub(f2))
end

if type(...) == "table" then M.write() end -- run as a script
return M
