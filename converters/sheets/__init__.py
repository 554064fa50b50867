"""Spreadsheets (.xlsx, .xlsm, .xls, .ods): one Markdown table per sheet, via python-calamine."""
