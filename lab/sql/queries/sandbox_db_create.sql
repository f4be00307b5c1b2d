CREATE DATABASE cleanup_lab
