-- man-tables.lua — a pandoc filter for the manual pages (scripts/man.sh):
-- every table becomes a definition list, one entry per row (its first
-- cell the term; the other cells, each after its column's heading when
-- there are more than two columns, the definition).  Terminals render
-- such lists at any width, where tbl's narrow columns broke lines badly
-- and paginated output warned about blocks across page boundaries.
function Table(tbl)
  local heads = {}
  for _, row in ipairs(tbl.head.rows) do
    for i, cell in ipairs(row.cells) do
      heads[i] = pandoc.utils.stringify(cell.contents)
    end
  end
  local items = {}
  for _, body in ipairs(tbl.bodies) do
    for _, row in ipairs(body.body) do
      local cells = row.cells
      local term = pandoc.utils.blocks_to_inlines(cells[1].contents)
      local defs = {}
      for i = 2, #cells do
        local inl = pandoc.utils.blocks_to_inlines(cells[i].contents)
        if #cells > 2 and heads[i] and heads[i] ~= "" then
          table.insert(inl, 1, pandoc.Space())
          table.insert(inl, 1, pandoc.Str(heads[i] .. ":"))
        end
        table.insert(defs, pandoc.Para(inl))
      end
      table.insert(items, {term, {defs}})
    end
  end
  return pandoc.DefinitionList(items)
end
