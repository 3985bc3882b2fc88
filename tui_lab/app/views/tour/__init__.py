"""The tour: seed 000's explainer, one page per step, its picture beside its words.

`examples` (the fixed inputs), `pictures` (computed once in a worker from the shipped toys the tour holds),
`visuals` (the widgets), `steps` (the pages). The view is `view.py`.
"""
