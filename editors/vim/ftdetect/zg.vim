" ZipperGen workflows: *.zg
autocmd BufRead,BufNewFile *.zg setfiletype zg
