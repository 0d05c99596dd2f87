"""PowerShell's error records, as Windows PowerShell 5.1 prints them (ErrorView NormalView)."""

from __future__ import annotations

from xdnaforge.diagnosis.log_verdict import FAILURE, judge
from xdnaforge.tools.powershell import stopped_errors

# a setup script's own throw (the shape of a committed installer's log on a Ryzen AI laptop)
THROWN = """  Verifying OpenVINO NPU device...
Available devices: ['CPU', 'GPU']
OpenVINO installed, but NPU was not available to the portable runtime.
At C:\\w\\scripts\\setup\\setup-openvino-npu.ps1:128 char:28
+ ... DE -ne 0) { throw "OpenVINO installed, but NPU was not available to t ...
+                 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    + CategoryInfo          : OperationStopped: (OpenVINO instal...rtable runtime.:String) [], R
   untimeException
    + FullyQualifiedErrorId : OpenVINO installed, but NPU was not available to the portable runtime.
"""


def test_a_scripts_own_error_record_is_its_failure() -> None:
    message = "OpenVINO installed, but NPU was not available to the portable runtime."
    assert stopped_errors(THROWN) == [message]
    verdict = judge(THROWN)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].family == "device-access"


def test_a_message_the_console_wrapped_is_read_whole() -> None:
    wrapped = (
        "- Driver version: . : File C:\\Users\\u\\Documents\\WindowsPowerShell\\profile.ps1 cannot"
        " be loaded because running scripts is \n"
        "disabled on this system. For more information, see about_Execution_Policies at      \n"
        "https:/go.microsoft.com/fwlink/?LinkID=135170.\n"
        "At line:1 char:3\n"
        "+ . 'C:\\Users\\u\\Documents\\WindowsPowerShell\\profile.ps1'\n"
        "+   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "    + CategoryInfo          : SecurityError: (:) [], PSSecurityException\n"
        "    + FullyQualifiedErrorId : UnauthorizedAccess\n"
    )
    (message,) = stopped_errors(wrapped)
    assert message.startswith("- Driver version: . : File C:")
    assert message.endswith(
        "about_Execution_Policies at https:/go.microsoft.com/fwlink/?LinkID=135170."
    )


def test_a_native_programs_standard_error_says_nothing() -> None:
    native = (
        "python : UserWarning: the cache is cold\n"
        "At line:2 char:1\n"
        "+ python tools\\export.py --batch 128\n"
        "+ ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "    + CategoryInfo          : NotSpecified: (UserWarning...:String) [], RemoteException\n"
        "    + FullyQualifiedErrorId : NativeCommandError\n"
    )
    assert stopped_errors(native) == []
    assert stopped_errors("OpenVINO installed, but NPU was not available.\n") == []
