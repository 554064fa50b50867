"""E-mail messages: Internet mail (``.eml``) and Outlook's ``.msg``.

Both readers fill the same :class:`~converters.mail.message.Mail`, which is written
once (:mod:`converters.mail.message`): the subject as title, a header block, the
body, and the attachments (:mod:`converters.mail.attachments`).
"""
