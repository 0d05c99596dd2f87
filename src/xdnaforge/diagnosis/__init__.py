"""diagnosis"""
