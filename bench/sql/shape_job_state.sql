SELECT phase, pass_no, deleted, retained FROM cleanup.jobs WHERE id = $1
