" Vim syntax file
" Language:   ZipperGen workflows (.zg), compiled by zgc
" Install:    copy (or link) editors/vim/syntax and editors/vim/ftdetect into
"             ~/.vim (Vim) or ~/.config/nvim (Neovim); see docs/editors.md.
if exists('b:current_syntax')
  finish
endif

syn keyword zgDeclaration lifeline const enum var guard llm pure effect human planner workflow fragment
syn keyword zgInclude     import
syn keyword zgModifier    extern
syn keyword zgControl     if else while return skip parallel branch coregion
syn keyword zgTemporal    prev since once historically past seen
syn keyword zgType        bool int float str json
syn keyword zgConstant    true false null
syn keyword zgStore       store cell tools atomic read write consistency

syn match   zgNumber      '\<\d\+\%(\.\d\+\%([eE][+-]\=\d\+\)\=\|[eE][+-]\=\d\+\)\=\>'
syn match   zgOperator    '->\|==\|!=\|<=\|>=\|&&\|||\|[-+*/%<>!?=@]'
syn match   zgLifeline    '@\s*\zs\h\w*'
syn match   zgLifeline    '^\s*\zs\h\w*\ze\s*\%(:\|{\)'
syn match   zgLifeline    '->\s*\zs\u\w*\ze\s*('
syn match   zgFunction    '\%(\<\%(llm\|pure\|effect\|human\|planner\|workflow\|fragment\)\s\+\)\@<=\h\w*'

syn match   zgEscape      contained '\\\%([nrt"\\]\|u{\x\{1,6}}\)'
syn match   zgPlaceholder contained '{\h\w*}'
syn region  zgString      start='"""' end='"""' contains=zgEscape,zgPlaceholder
syn region  zgString      start='"\%("")\@!' skip='\\.' end='"\|$' oneline contains=zgEscape,zgPlaceholder

syn keyword zgTodo        contained TODO FIXME XXX NOTE
syn match   zgComment     '//.*$' contains=zgTodo,@Spell
syn region  zgComment     start='/\*' end='\*/' contains=zgTodo,@Spell

hi def link zgDeclaration Structure
hi def link zgInclude     Include
hi def link zgModifier    StorageClass
hi def link zgControl     Conditional
hi def link zgTemporal    Keyword
hi def link zgType        Type
hi def link zgConstant    Boolean
hi def link zgStore       Structure
hi def link zgNumber      Number
hi def link zgOperator    Operator
hi def link zgLifeline    Identifier
hi def link zgFunction    Function
hi def link zgEscape      SpecialChar
hi def link zgPlaceholder Special
hi def link zgString      String
hi def link zgTodo        Todo
hi def link zgComment     Comment

let b:current_syntax = 'zg'
