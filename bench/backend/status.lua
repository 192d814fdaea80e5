-- wrk script: count answers that are not 200 and print the first few bodies (sizing runs).
local shown = 0
function response(status, headers, body)
  if status ~= 200 and shown < 5 then
    shown = shown + 1
    io.stderr:write("status " .. status .. ": " .. body:sub(1, 300) .. "\n")
  end
end
