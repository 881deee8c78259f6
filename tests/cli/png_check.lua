-- tests/cli/png_check.lua: a PNG file's signature, IHDR size, and that it
-- holds a picture: its compressed image data (IDAT) more than four times a
-- blank image's of the same size (`blank`, drawn by gnuplot with nothing on it).
--   kvplan tests/cli/png_check.lua path=chart.png width=900 height=500 blank=blank.png
local kv = require "kvplan"
local o = kv.options(..., {path = "", width = 0, height = 0, blank = ""})
local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  assert(s:sub(1, 8) == "\137PNG\r\n\26\n", p .. ": not a PNG signature")
  assert(s:sub(13, 16) == "IHDR", p .. ": no IHDR chunk first")
  local w, h = string.unpack(">I4>I4", s, 17)
  local idat, pos = 0, 9
  while pos <= #s - 11 do
    local len, typ = string.unpack(">I4c4", s, pos)
    if typ == "IDAT" then idat = idat + len end
    pos = pos + 12 + len
  end
  assert(pos == #s + 1, p .. ": chunks do not end at the end of the file")
  return w, h, idat
end
local w, h, idat = read(o.path)
assert(w == o.width and h == o.height, string.format("%s: %dx%d, wanted %dx%d", o.path, w, h, o.width, o.height))
local bw, bh, bidat = read(o.blank)
assert(bw == w and bh == h, "blank of another size")
assert(idat > 4 * bidat, string.format("%s: %d bytes of image data, a blank image has %d", o.path, idat, bidat))
io.write(string.format("%s: %dx%d PNG, %d bytes of image data (blank: %d)\n", o.path, w, h, idat, bidat))
