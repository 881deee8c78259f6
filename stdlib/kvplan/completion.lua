-- stdlib/kvplan/completion.lua: `kvplan completion bash|zsh`, the shell
-- completion of kvplan generated from what the program itself takes: the
-- commands and options (engine/cli/main.c's tables, as kvplan.cli.commands),
-- each command's key=value arguments (its ready script's or stdlib
-- function's kv.options defaults, which hold the field registry's deployment
-- fields: a field added to fields.lua completes without an edit here) and
-- the values of the enumerated ones (the registry's enums and booleans, the
-- storage formats, the catalogs' GPU and model ids).
-- Stdlib layer: the scripts are text; nothing here runs a shell.

local util = require "kvplan.util"
local options = require "kvplan.options"
local fields = require "kvplan.fields"

local M = {}

-- The defaults table a command checks its arguments against: the command
-- run with kvplan.cli.describe set, so that options() raises it instead of
-- parsing (options.Described). nil for a command that takes no key=value.
local function defaults_of(cmd, cli)
  local run
  if cmd.script then
    local chunk, err = loadfile(cmd.script)
    if chunk == nil then util.raise("completion: cannot load %s: %s", cmd.script, util.shown(err)) end
    run = function() return chunk(cli.args) end
  elseif cmd.lua and cmd.name ~= "completion" then
    -- one word, as a listing's PATTERN or plot's REPORT (they check the count first)
    run = function() return require("kvplan.commands")[cmd.name]({"-"}) end
  else
    return nil
  end
  cli.describe = true
  local ok, err = pcall(run)
  cli.describe = nil
  if not ok and getmetatable(err) == options.Described then return err.defaults end
  util.raise("completion: '%s' did not name its arguments (%s)", cmd.name,
             ok and "it ran to the end" or util.shown(err))
end

--- The end of `kvplan COMMAND --help` for a ready script whose help is its
--- opening comment (engine/cli/main.c command_help): one line a deployment
--- field of the registry the script takes (its kv.options defaults, as the
--- completion reads them) that the comment does not describe as an argument
--- of its own ("--   name ..."), in the registry's order, as kvplan simulate
--- --help and kvplan launch --help list theirs; "" when there is none.
--- fields_help(nil, NAME): the same for the stdlib command NAME (calibrate,
--- models, ...), whose help text is main.c's: every field it takes.
function M.fields_help(path, name)
  local cli = package.loaded["kvplan.cli"]
  if cli == nil then util.raise("completion: fields_help runs under kvplan (kvplan COMMAND --help)") end
  local defs = path and defaults_of({script = path, name = path}, cli)
               or name ~= "completion" and defaults_of({lua = true, name = name}, cli)
  if not defs then return "" end
  local described = {}
  local f = path and io.open(path, "r")
  if f then
    for line in f:lines() do
      if line:sub(1, 2) ~= "--" then break end
      local name = line:match("^%-%-  ? ?([%w_.]+) ")
      if name then described[name] = true end
    end
    f:close()
  end
  local lines = {}
  for _, fd in ipairs(fields.list) do
    if (defs[fd.name] ~= nil or fd.every_command) and not described[fd.name] then
      lines[#lines + 1] = fields.help_line(fd.name, fd.meaning, fd)
    end
  end
  if #lines == 0 then return "" end
  return "\nthe other deployment fields it takes (docs/fields.md), each checked as the field:\n"
         .. table.concat(lines, "\n") .. "\n"
end

--- The facts both scripts are made of: commands {name, keys = {sorted}},
--- options {name, letter, arg}, formats (--format's), values {key -> sorted words} and the
--- keys whose value is a file.
function M.describe()
  local cli = package.loaded["kvplan.cli"]
  if cli == nil or cli.commands == nil then
    util.raise("completion: run as 'kvplan completion bash|zsh' (the commands come from the binary)")
  end
  local d = {commands = {}, options = cli.commands.options, formats = cli.commands.formats, values = {}}
  local every = {}
  for _, f in ipairs(fields.list) do
    if f.every_command then every[#every + 1] = f.name end
  end
  for _, cmd in ipairs(cli.commands.commands) do
    local defs = defaults_of(cmd, cli)
    local keys = {}
    if defs then
      for k in pairs(defs) do keys[#keys + 1] = k end
      for _, k in ipairs(every) do
        if defs[k] == nil then keys[#keys + 1] = k end
      end
      table.sort(keys)
    end
    -- files: the stdlib commands take words besides key=value (LOG, REPORT.csv, ...)
    d.commands[#d.commands + 1] = {name = cmd.name, keys = keys, defaults = defs, files = cmd.lua}
  end
  -- values: by key, for every key some command takes and the engines' spellings
  local models, gpus = {}, {}
  for _, m in ipairs(require("kvplan.models").all()) do models[#models + 1] = m.id end
  for _, g in ipairs(require("kvplan.gpus").all()) do gpus[#gpus + 1] = g.id end
  local formats = require("kvplan.formats").names()
  local bools = {"false", "true"}
  local v = d.values
  v.model, v.models, v.gpu, v.gpus = models, models, gpus, gpus
  v.kv, v.weights, v.kv_full = {"auto", table.unpack(formats)}, formats, formats
  for _, f in ipairs(fields.list) do
    if f.type == "enum" then
      local vals = {}
      for i, x in ipairs(f.values) do vals[i] = tostring(x) end
      table.sort(vals)
      v[f.name] = vals
    elseif f.type == "boolean" then
      v[f.name] = bools
    end
  end
  for _, c in ipairs(d.commands) do -- a command's own boolean arguments
    for k, def in pairs(c.defaults or {}) do
      if type(def) == "boolean" and v[k] == nil then v[k] = bools end
    end
  end
  for alias, name in pairs(fields.aliases) do
    if v[name] and alias ~= name then v[alias] = v[name] end
  end
  return d
end

-- Words as one shell word each: kvplan's names are letters, digits and
-- '_.-+' (and the '=' of key=); anything else would need quoting the scripts do not do.
local function words(list)
  for _, w in ipairs(list) do
    if not w:match("^[%w_.+=-]+$") then util.raise("completion: '%s' is not a plain word", w) end
  end
  return table.concat(list, " ")
end

-- The value keys in a stable order, grouped by their word lists.
local function value_cases(values)
  local groups, order = {}, {}
  for _, k in ipairs(util.sorted_keys(values)) do
    local text = words(values[k])
    if groups[text] == nil then groups[text], order[#order + 1] = {}, text end
    table.insert(groups[text], k)
  end
  local out = {}
  for i, text in ipairs(order) do out[i] = {keys = groups[text], words = text} end
  return out
end

-- The words both scripts complete: long options, the options that take a
-- value (long and short), the command names.
local function option_words(d)
  local long, with_arg, names = {}, {}, {}
  for _, o in ipairs(d.options) do
    long[#long + 1] = "--" .. o.name
    if o.arg then
      with_arg[#with_arg + 1] = "--" .. o.name
      if o.letter then with_arg[#with_arg + 1] = "-" .. o.letter end
    end
  end
  long[#long + 1], long[#long + 2] = "--help", "--version"
  for _, c in ipairs(d.commands) do names[#names + 1] = c.name end
  return long, with_arg, names
end

local function header(shell)
  return string.format("# %s completion of kvplan %s, generated by 'kvplan completion %s' from its\n"
                       .. "# commands, options, the field registry and the catalogs: regenerate it\n"
                       .. "# after an upgrade (make install does).\n", shell, require("kvplan.core").version or "",
                       shell)
end

--- The bash script: a function _kvplan for `complete -F`. It reads
--- COMP_WORDS and COMP_CWORD alone (no bash-completion helpers), with '='
--- a word break (bash's default: "tp", "=", "4") or not ("tp=4").
function M.bash(d)
  local long, with_arg, names = option_words(d)
  local b = {header("bash"),
    "_kvplan() {",
    "  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= key= val= pre= i w list=",
    "  [ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}",
    "  COMPREPLY=()",
    "  # the command: the first word that is no option, no option's value, no key=value",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    "    w=${COMP_WORDS[i]}",
    "    case $w in",
    "      " .. table.concat(with_arg, "|") .. ") ((i++)) ;;",
    "      --) break ;;",
    "      -*|=) ;;",
    "      *) [ \"${COMP_WORDS[i+1]}\" = = ] && { ((i += 2)); continue; }",
    "         case $w in *=*) ;; *) cmd=$w; break ;; esac ;;",
    "    esac",
    "  done",
    "  # a value: key=VAL as one word, or key = VAL split at the '='",
    "  if [[ $cur == ?*=* ]]; then key=${cur%%=*}; val=${cur#*=}; pre=$key=",
    "  elif [ \"$cur\" = = ]; then key=$prev; val=",
    "  elif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 1 ]; then key=${COMP_WORDS[COMP_CWORD-2]}; val=$cur",
    "  fi",
    "  case $prev in",
    "    -f|--format) COMPREPLY=($(compgen -W '" .. words(d.formats) .. "' -- \"$cur\")); return ;;",
    "    " .. table.concat(with_arg, "|") .. ") return ;; # a file or a value: bash's own completion",
    "  esac",
    "  if [ -n \"$key\" ]; then",
    "    case $key in",
  }
  for _, c in ipairs(value_cases(d.values)) do
    b[#b + 1] = "      " .. table.concat(c.keys, "|") .. ") list='" .. c.words .. "' ;;"
  end
  b[#b + 1] = "      *) return ;; # a file, a number: bash's own completion"
  b[#b + 1] = "    esac"
  b[#b + 1] = "    # a list (gpus=h100,l4): complete its last item"
  b[#b + 1] = "    local head="
  b[#b + 1] = "    [[ $val == *,* ]] && head=${val%,*},"
  b[#b + 1] = "    COMPREPLY=($(compgen -P \"$pre$head\" -W \"$list\" -- \"${val##*,}\"))"
  b[#b + 1] = "    return"
  b[#b + 1] = "  fi"
  b[#b + 1] = "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '" .. words(long) .. "' -- \"$cur\")); return; fi"
  b[#b + 1] = "  case $cmd in"
  b[#b + 1] = "    '') COMPREPLY=($(compgen -W '" .. words(names) .. "' -- \"$cur\")); return ;;"
  b[#b + 1] = "    completion) COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\")); return ;;"
  for _, c in ipairs(d.commands) do
    if #c.keys > 0 then
      local ks = {}
      for i, k in ipairs(c.keys) do ks[i] = k .. "=" end
      b[#b + 1] = "    " .. c.name .. ") list='" .. words(ks) .. "' ;;"
    end
  end
  b[#b + 1] = "    *) return ;; # a script's own arguments: files"
  b[#b + 1] = "  esac"
  b[#b + 1] = "  COMPREPLY=($(compgen -W \"$list\" -- \"$cur\"))"
  b[#b + 1] = "  # key= takes its value next: no space after it"
  b[#b + 1] = "  [ ${#COMPREPLY[@]} -gt 0 ] && compopt -o nospace 2> /dev/null"
  b[#b + 1] = "  return 0"
  b[#b + 1] = "}"
  b[#b + 1] = "complete -o default -F _kvplan kvplan"
  return table.concat(b, "\n") .. "\n"
end

--- The zsh script: an autoloadable _kvplan (#compdef kvplan) for fpath.
function M.zsh(d)
  local long, with_arg, names = option_words(d)
  local z = {"#compdef kvplan", header("zsh"),
    "_kvplan() {",
    "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd= key= i w files=",
    "  local -a list",
    "  for ((i = 2; i < CURRENT; i++)); do",
    "    w=${words[i]}",
    "    case $w in",
    "      " .. table.concat(with_arg, "|") .. ") ((i++)) ;;",
    "      --) break ;;",
    "      -*|*=*) ;;",
    "      *) cmd=$w; break ;;",
    "    esac",
    "  done",
    "  case $prev in",
    "    -f|--format) compadd -- " .. words(d.formats) .. "; return ;;",
    "    " .. table.concat(with_arg, "|") .. ") _files; return ;;",
    "  esac",
    "  if [[ $cur == ?*=* ]]; then",
    "    key=${cur%%=*}",
    "    case $key in",
  }
  for _, c in ipairs(value_cases(d.values)) do
    z[#z + 1] = "      " .. table.concat(c.keys, "|") .. ") list=(" .. c.words .. ") ;;"
  end
  z[#z + 1] = "      *) compset -P '*='; _files; return ;;"
  z[#z + 1] = "    esac"
  z[#z + 1] = "    compset -P '*='"
  z[#z + 1] = "    compset -P '*,'"
  z[#z + 1] = "    compadd -- $list"
  z[#z + 1] = "    return"
  z[#z + 1] = "  fi"
  z[#z + 1] = "  if [[ $cur == -* ]]; then compadd -- " .. words(long) .. "; return; fi"
  z[#z + 1] = "  case $cmd in"
  z[#z + 1] = "    '') compadd -- " .. words(names) .. "; _files -g '*.lua'; return ;;"
  z[#z + 1] = "    completion) compadd -- bash zsh; return ;;"
  for _, c in ipairs(d.commands) do
    if #c.keys > 0 then
      z[#z + 1] = "    " .. c.name .. ") list=(" .. words(c.keys) .. ")" .. (c.files and "; files=1" or "") .. " ;;"
    end
  end
  z[#z + 1] = "    *) _files; return ;;"
  z[#z + 1] = "  esac"
  z[#z + 1] = "  compadd -S = -- $list"
  z[#z + 1] = "  [[ -n $files ]] && _files"
  z[#z + 1] = "}"
  z[#z + 1] = ""
  z[#z + 1] = "_kvplan \"$@\""
  return table.concat(z, "\n") .. "\n"
end

--- kvplan completion bash|zsh: the script on standard output.
function M.command(args)
  local shell, n = args and args[1], 0
  for _ in pairs(args or {}) do n = n + 1 end
  if (shell ~= "bash" and shell ~= "zsh") or n ~= 1 then
    -- every word and key=value given: "completion bash extra" said "(got 'bash')"
    local got = {}
    for _, w in ipairs(args or {}) do got[#got + 1] = "'" .. util.escape(util.shown(w), 40) .. "'" end
    local keys = {}
    for k in pairs(args or {}) do
      if math.type(k) ~= "integer" or k < 1 or k > #args then keys[#keys + 1] = tostring(k) end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      got[#got + 1] = "'" .. util.escape(k .. "=" .. util.shown(args[k]), 40) .. "'"
    end
    options.bad("usage: kvplan completion bash|zsh (got %s)",
                #got == 0 and "no shell" or table.concat(got, " "))
  end
  io.stdout:write(M[shell](M.describe()))
end

return M
