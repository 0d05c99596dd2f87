"""debs"""
